package main

// Card traffic (-cards F, issue 18): at setup every other customer gets a
// virtual card funded by its USD account; during the load a share F of the
// operations are sandbox card network messages (authorization, clearing in
// full, below the authorization or in two parts, reversal, return of a
// settled purchase) instead of transfers. Each worker owns the card
// transactions it authorized, so no two messages on one transaction race,
// and keeps a model of each: what is held, settled and returned. After the
// load every open authorization is cleared (cardDrain), so the statements
// and balances are final; the checks then compare the model with the ledger
// and with GET /transactions (cardChecks).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// cardTxView is what the API shows of a card transaction (a simulation's
// "transaction", or GET /transactions/{id}).
type cardTxView struct {
	ID                    string
	Status                string
	Type                  string
	CardID                string
	Authorized, Settled   int64
	Refunded              int64
	OriginalTransactionID string
}

// decodeCardTx reads a card transaction from JSON: a simulation's answer
// (the transaction under "transaction") when sim, else the transaction
// itself. It refuses a body without an id or status, or with a negative
// amount.
func decodeCardTx(body []byte, sim bool) (cardTxView, error) {
	type amount struct {
		Amount int64 `json:"amount"`
	}
	type tx struct {
		ID                    string `json:"id"`
		Status                string `json:"status"`
		Type                  string `json:"type"`
		CardID                string `json:"cardId"`
		AuthorizedAmount      amount `json:"authorizedAmount"`
		SettledAmount         amount `json:"settledAmount"`
		RefundedAmount        amount `json:"refundedAmount"`
		OriginalTransactionID string `json:"originalTransactionId"`
	}
	var t tx
	if sim {
		var w struct {
			Transaction *tx `json:"transaction"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			return cardTxView{}, err
		}
		if w.Transaction == nil {
			return cardTxView{}, errors.New("no transaction in the answer")
		}
		t = *w.Transaction
	} else if err := json.Unmarshal(body, &t); err != nil {
		return cardTxView{}, err
	}
	v := cardTxView{ID: t.ID, Status: t.Status, Type: t.Type, CardID: t.CardID, Authorized: t.AuthorizedAmount.Amount,
		Settled: t.SettledAmount.Amount, Refunded: t.RefundedAmount.Amount, OriginalTransactionID: t.OriginalTransactionID}
	switch {
	case v.ID == "" || v.Status == "":
		return v, errors.New("card transaction without id or status")
	case v.Authorized < 0 || v.Settled < 0 || v.Refunded < 0:
		return v, fmt.Errorf("card transaction %s with a negative amount", v.ID)
	}
	return v, nil
}

// cardHolder is a customer with an ACTIVE card.
type cardHolder struct {
	CardID    string
	AccountID string
}

// cardTx is the bench's model of one purchase: what it authorized, holds,
// settled and had returned, and the status the last answer showed.
// Uncertain: a message on it went unresolved, so the model may be wrong.
type cardTx struct {
	ID, CardID, AccountID string
	Authorized, Held      int64
	Settled, Returned     int64
	Status                string
	Uncertain             bool
	Returns               []string // ids of its return rows
}

func (t *cardTx) open() bool { return t.Status == "AUTHORIZED" || t.Status == "PARTIALLY_SETTLED" }

// cardResult is what the card traffic did.
type cardResult struct {
	Txs        []*cardTx
	Ops        map[string]int // acknowledged messages by kind
	Declined   int
	Unresolved int64
	Refused    map[string]int // 4xx answers by code
	Drained    int
}

func newCardResult() *cardResult {
	return &cardResult{Ops: map[string]int{}, Refused: map[string]int{}}
}

// merge adds a worker's result.
func (r *cardResult) merge(o *cardResult) {
	r.Txs = append(r.Txs, o.Txs...)
	for k, v := range o.Ops {
		r.Ops[k] += v
	}
	for k, v := range o.Refused {
		r.Refused[k] += v
	}
	r.Declined += o.Declined
	r.Unresolved += o.Unresolved
	r.Drained += o.Drained
}

// cardSummary is the report's view of the card traffic.
type cardSummary struct {
	Cards        int            `json:"cards"`
	Transactions int            `json:"transactions"`
	Messages     map[string]int `json:"messages"`
	Declined     int            `json:"declined"`
	Refused      map[string]int `json:"refused,omitempty"`
	Unresolved   int64          `json:"unresolved"`
	Drained      int            `json:"drainedAtEnd"`
	Settled      int64          `json:"settledCents"`
	Returned     int64          `json:"returnedCents"`
}

func (r *cardResult) summary(cards int) cardSummary {
	s := cardSummary{Cards: cards, Transactions: len(r.Txs), Messages: r.Ops, Declined: r.Declined, Refused: r.Refused,
		Unresolved: r.Unresolved, Drained: r.Drained}
	for _, t := range r.Txs {
		s.Settled += t.Settled
		s.Returned += t.Returned
	}
	return s
}

// issueCards issues a card to every other customer (at least one), funded
// by its USD account, and waits until each is ACTIVE.
func issueCards(ctx context.Context, c *client, runID string, accts []account, workers int) ([]cardHolder, error) {
	n := max(1, len(accts)/2)
	out := make([]cardHolder, n)
	errs := make(chan error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				a := accts[2*i%len(accts)]
				id, err := c.create(ctx, "/cards", map[string]any{"customerId": a.CustomerID, "fundingSource": a.AccountID},
					fmt.Sprintf("%s-card-%d", runID, i))
				if err == nil {
					err = awaitCard(ctx, c, id, 60*time.Second)
				}
				if err != nil {
					errs <- fmt.Errorf("card of customer %s: %w", a.CustomerID, err)
					continue
				}
				out[i] = cardHolder{CardID: id, AccountID: a.AccountID}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return out, <-errs
}

// awaitCard polls a card until it is ACTIVE.
func awaitCard(ctx context.Context, c *client, cardID string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var card struct {
			Status string `json:"status"`
		}
		if err := c.must(ctx, "GET", "/cards/"+cardID, nil, http.StatusOK, &card); err != nil {
			return err
		}
		if card.Status == "ACTIVE" {
			return nil
		}
		if card.Status != "PROCESSING" || time.Now().After(deadline) {
			return fmt.Errorf("card %s is %s, not ACTIVE", cardID, card.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cardWorker is one load worker's card traffic.
type cardWorker struct {
	c       *client
	runID   string
	w       int
	seq     int
	holders []cardHolder
	res     *cardResult
	mine    []*cardTx // the transactions this worker authorized
}

// send posts one simulation with its own key, retried until definitive. It
// answers the transaction the simulation made or changed, or ok false
// (recorded) when refused or unresolved.
func (cw *cardWorker) send(ctx context.Context, cardID, op string, body map[string]any) (cardTxView, bool) {
	cw.seq++
	key := fmt.Sprintf("%s-card-%d-%d", cw.runID, cw.w, cw.seq)
	r, _, err := cw.c.doRetry(ctx, "POST", "/sandbox/cards/"+cardID+"/simulate/"+op, body, key)
	if err != nil {
		cw.res.Unresolved++
		return cardTxView{}, false
	}
	if r.Status != http.StatusAccepted {
		cw.res.Refused[op+" "+r.Code()]++
		return cardTxView{}, false
	}
	v, err := decodeCardTx(r.Body, true)
	if err != nil {
		cw.res.Refused[op+" BAD_RESPONSE"]++
		return v, false
	}
	cw.res.Ops[op]++
	return v, true
}

// step sends one card message: an action on one of the worker's
// transactions, or a new authorization.
func (cw *cardWorker) step(ctx context.Context, rng *rand.Rand, maxAmount int64) {
	var open, returnable []*cardTx
	for _, t := range cw.mine {
		switch {
		case t.Uncertain:
		case t.open():
			open = append(open, t)
		case t.Status == "SETTLED" && t.Settled > t.Returned:
			returnable = append(returnable, t)
		}
	}
	x := rng.Float64()
	switch {
	case len(open) > 0 && x < 0.55:
		cw.act(ctx, rng, open[rng.IntN(len(open))])
	case len(returnable) > 0 && x < 0.65:
		t := returnable[rng.IntN(len(returnable))]
		cw.returnSome(ctx, t, 1+rng.Int64N(t.Settled-t.Returned))
	default:
		cw.authorize(ctx, rng, 1+rng.Int64N(maxAmount))
	}
}

func (cw *cardWorker) authorize(ctx context.Context, rng *rand.Rand, amount int64) {
	h := cw.holders[rng.IntN(len(cw.holders))]
	v, ok := cw.send(ctx, h.CardID, "authorization", map[string]any{"amount": amount, "currency": map[string]any{"code": "USD"},
		"merchant": map[string]any{"descriptor": "BENCH MERCHANT", "mcc": "5814", "country": "US"}})
	if !ok {
		return
	}
	t := &cardTx{ID: v.ID, CardID: h.CardID, AccountID: h.AccountID, Authorized: amount, Status: v.Status}
	if v.Status == "DECLINED" {
		cw.res.Declined++
	} else {
		t.Held = amount
	}
	cw.mine = append(cw.mine, t)
	cw.res.Txs = append(cw.res.Txs, t)
}

// act clears an open authorization (in full; below it, releasing the rest;
// or half now and the rest later) or reverses an unsettled one.
func (cw *cardWorker) act(ctx context.Context, rng *rand.Rand, t *cardTx) {
	x := rng.Float64()
	switch {
	case t.Status == "AUTHORIZED" && x < 0.2:
		cw.on(ctx, t, "reversal", nil, func() { t.Held = 0 })
	case t.Status == "AUTHORIZED" && x < 0.45 && t.Held > 1:
		part := t.Held / 2
		cw.on(ctx, t, "clearing", map[string]any{"amount": part, "final": false}, func() { t.Held -= part; t.Settled += part })
	case x < 0.65 && t.Held > 1:
		part := 1 + rng.Int64N(t.Held-1) // below what is held: the rest is released
		cw.on(ctx, t, "clearing", map[string]any{"amount": part}, func() { t.Held = 0; t.Settled += part })
	default:
		cw.clearAll(ctx, t)
	}
}

// clearAll clears what the transaction holds, finally.
func (cw *cardWorker) clearAll(ctx context.Context, t *cardTx) {
	held := t.Held
	cw.on(ctx, t, "clearing", map[string]any{"amount": held}, func() { t.Held = 0; t.Settled += held })
}

// on sends op on t and, when acknowledged, applies the model's change.
// An unresolved message leaves t uncertain.
func (cw *cardWorker) on(ctx context.Context, t *cardTx, op string, body map[string]any, apply func()) {
	if body == nil {
		body = map[string]any{}
	}
	body["cardTransactionId"] = t.ID
	u := cw.res.Unresolved
	v, ok := cw.send(ctx, t.CardID, op, body)
	if cw.res.Unresolved > u {
		t.Uncertain = true
	}
	if ok {
		apply()
		t.Status = v.Status
	}
}

func (cw *cardWorker) returnSome(ctx context.Context, t *cardTx, amount int64) {
	u := cw.res.Unresolved
	v, ok := cw.send(ctx, t.CardID, "return", map[string]any{"cardTransactionId": t.ID, "amount": amount})
	if cw.res.Unresolved > u {
		t.Uncertain = true
	}
	if ok {
		t.Returned += amount
		t.Returns = append(t.Returns, v.ID)
	}
}

// drain clears every open authorization of the worker, so nothing is held
// when the checks run.
func (cw *cardWorker) drain(ctx context.Context) {
	for _, t := range cw.mine {
		if t.open() && !t.Uncertain {
			cw.clearAll(ctx, t)
			cw.res.Drained++
		}
	}
}

// cardMoney is what the model says the card traffic did to the run's USD
// accounts: settled purchases left them, returns came back, and what is
// still held. Inexact when some transaction is uncertain.
func cardMoney(txs []*cardTx) (settled, returned, held int64, uncertain int) {
	for _, t := range txs {
		settled += t.Settled
		returned += t.Returned
		held += t.Held
		if t.Uncertain {
			uncertain++
		}
	}
	return
}

// compareCardTx compares the model of a purchase with what the API shows;
// "" when they agree.
func compareCardTx(t *cardTx, v cardTxView) string {
	want := t.Status
	if t.open() && t.Held == 0 && t.Settled > 0 {
		want = "SETTLED"
	}
	switch {
	case v.ID != t.ID:
		return fmt.Sprintf("read %q for %s", v.ID, t.ID)
	case v.CardID != t.CardID:
		return fmt.Sprintf("%s: card %s, want %s", t.ID, v.CardID, t.CardID)
	case v.Status != want:
		return fmt.Sprintf("%s: status %s, want %s", t.ID, v.Status, want)
	case v.Settled != t.Settled || v.Refunded != t.Returned:
		return fmt.Sprintf("%s: settled %d refunded %d, want %d and %d", t.ID, v.Settled, v.Refunded, t.Settled, t.Returned)
	case v.Status != "DECLINED" && v.Authorized < t.Authorized:
		return fmt.Sprintf("%s: authorized %d, want at least %d", t.ID, v.Authorized, t.Authorized)
	}
	return ""
}
