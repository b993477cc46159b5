package main

// Card traffic (-cards F, issue 18): at setup every other customer gets a
// virtual card funded by its USD account (limits: per transaction, and per
// day on every other card; MCC 7995 blocked); each card belongs to one
// load worker. During the load a share F of the operations are sandbox
// card network messages instead of transfers: purchase, single-message,
// credit and credit-advice authorizations (some made to decline: frozen or
// closed card, over a limit, MCC blocked, insufficient funds), clearings
// (in full, below, above, in two parts), expiries, full and partial
// reversals, advices and incremental authorizations, returns and return
// reversals; and card changes: freeze, unfreeze, close (its open
// authorizations are reconciled) and a replacement card. The worker keeps
// a model of its cards and transactions (cards_model.go), predicts each
// outcome, and reads it back with GET /transactions/{id} until it shows,
// so the simulations may apply at once or later in the background. After
// the load every open authorization is cleared (the settle phase); the
// checks then compare the model with the ledger and the API (cards_checks.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	Direction             string
	Reason                string // cardDeclinedReason
	Token                 string // issuerTransactionToken
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
		ID                    string  `json:"id"`
		Status                string  `json:"status"`
		Type                  string  `json:"type"`
		CardID                string  `json:"cardId"`
		Direction             string  `json:"direction"`
		Reason                *string `json:"cardDeclinedReason"`
		Token                 string  `json:"issuerTransactionToken"`
		AuthorizedAmount      amount  `json:"authorizedAmount"`
		SettledAmount         amount  `json:"settledAmount"`
		RefundedAmount        amount  `json:"refundedAmount"`
		OriginalTransactionID string  `json:"originalTransactionId"`
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
	v := cardTxView{ID: t.ID, Status: t.Status, Type: t.Type, CardID: t.CardID, Direction: t.Direction, Token: t.Token,
		Authorized: t.AuthorizedAmount.Amount, Settled: t.SettledAmount.Amount, Refunded: t.RefundedAmount.Amount,
		OriginalTransactionID: t.OriginalTransactionID}
	if t.Reason != nil {
		v.Reason = *t.Reason
	}
	switch {
	case v.ID == "" || v.Status == "":
		return v, errors.New("card transaction without id or status")
	case v.Authorized < 0 || v.Settled < 0 || v.Refunded < 0:
		return v, fmt.Errorf("card transaction %s with a negative amount", v.ID)
	}
	return v, nil
}

// cardResult is what the card traffic did.
type cardResult struct {
	Txs        []*cardTx
	Cards      []*benchCard
	Ops        map[string]int // acknowledged messages and card changes by kind
	Declined   map[string]int // declined authorizations by reason
	Unresolved int64
	Retries    int64          // simulations sent again with their key
	Refused    map[string]int // 4xx answers by message and code
	Drained    int
	// Mismatches: outcomes the model did not predict (Mismatch: one).
	Mismatches int
	Mismatch   string
}

func newCardResult() *cardResult {
	return &cardResult{Ops: map[string]int{}, Refused: map[string]int{}, Declined: map[string]int{}}
}

// merge adds a worker's result.
func (r *cardResult) merge(o *cardResult) {
	r.Txs = append(r.Txs, o.Txs...)
	r.Cards = append(r.Cards, o.Cards...)
	for _, m := range [][2]map[string]int{{r.Ops, o.Ops}, {r.Refused, o.Refused}, {r.Declined, o.Declined}} {
		for k, v := range m[1] {
			m[0][k] += v
		}
	}
	r.Unresolved += o.Unresolved
	r.Retries += o.Retries
	r.Drained += o.Drained
	r.Mismatches += o.Mismatches
	if o.Mismatch != "" {
		r.Mismatch = o.Mismatch
	}
}

// mismatch records an outcome the model did not predict.
func (r *cardResult) mismatch(format string, args ...any) {
	r.Mismatches++
	r.Mismatch = fmt.Sprintf(format, args...)
}

// cardSummary is the report's view of the card traffic.
type cardSummary struct {
	Cards        int            `json:"cards"`
	Transactions int            `json:"transactions"`
	Messages     map[string]int `json:"messages"`
	Declined     map[string]int `json:"declined"`
	Refused      map[string]int `json:"refused,omitempty"`
	Unresolved   int64          `json:"unresolved"`
	Retries      int64          `json:"retries"`
	Mismatches   int            `json:"mismatches"`
	Drained      int            `json:"drainedAtEnd"`
	Settled      int64          `json:"settledCents"`  // purchases
	Credited     int64          `json:"creditedCents"` // merchant credits
	Returned     int64          `json:"returnedCents"` // returns that stayed
}

func (r *cardResult) summary(cards int) cardSummary {
	s := cardSummary{Cards: cards, Transactions: len(r.Txs), Messages: r.Ops, Declined: r.Declined, Refused: r.Refused,
		Unresolved: r.Unresolved, Retries: r.Retries, Mismatches: r.Mismatches, Drained: r.Drained}
	for _, t := range r.Txs {
		if t.Credit {
			s.Credited += t.Settled
		} else {
			s.Settled += t.Settled
			s.Returned += t.returned()
		}
	}
	return s
}

func (s cardSummary) declined() int {
	n := 0
	for _, v := range s.Declined {
		n += v
	}
	return n
}

// cardLimits are the limits of the i-th card issued at setup: a
// per-transaction limit of twice the largest ordinary amount, and on every
// other card a daily limit the traffic reaches.
func cardLimits(i int, maxAmount int64) (perTxn, perDay int64) {
	if i%2 == 1 {
		return 2 * maxAmount, 12 * maxAmount
	}
	return 2 * maxAmount, 0
}

// issueCard issues a card to a customer, funded by its USD account, with
// its limits and MCC 7995 blocked, and waits until it is ACTIVE.
func issueCard(ctx context.Context, c *client, key string, a account, perTxn, perDay int64) (*benchCard, error) {
	body := map[string]any{"customerId": a.CustomerID, "fundingSource": a.AccountID,
		"maxSpendPerTransaction": perTxn, "blockedMccs": []string{blockedMCC}}
	if perDay > 0 {
		body["maxSpendPerDay"] = perDay
	}
	id, err := c.create(ctx, "/cards", body, key)
	if err == nil {
		err = awaitCard(ctx, c, id, 60*time.Second)
	}
	if err != nil {
		return nil, fmt.Errorf("card of customer %s: %w", a.CustomerID, err)
	}
	return &benchCard{ID: id, AccountID: a.AccountID, CustomerID: a.CustomerID, Status: "ACTIVE", PerTxn: perTxn, PerDay: perDay}, nil
}

// issueCards issues a card to every other customer (at least one) and
// waits until each is ACTIVE.
func issueCards(ctx context.Context, c *client, runID string, accts []account, workers int, maxAmount int64) ([]*benchCard, error) {
	n := max(1, len(accts)/2)
	out := make([]*benchCard, n)
	errs := make(chan error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				perTxn, perDay := cardLimits(i, maxAmount)
				card, err := issueCard(ctx, c, fmt.Sprintf("%s-card-%d", runID, i), accts[2*i%len(accts)], perTxn, perDay)
				if err != nil {
					errs <- err
					continue
				}
				out[i] = card
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
		status, err := cardStatus(ctx, c, cardID)
		if err != nil {
			return err
		}
		if status == "ACTIVE" {
			return nil
		}
		if status != "PROCESSING" || time.Now().After(deadline) {
			return fmt.Errorf("card %s is %s, not ACTIVE", cardID, status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func cardStatus(ctx context.Context, c *client, cardID string) (string, error) {
	var card struct {
		Status string `json:"status"`
	}
	err := c.must(ctx, "GET", "/cards/"+cardID, nil, http.StatusOK, &card)
	return card.Status, err
}
