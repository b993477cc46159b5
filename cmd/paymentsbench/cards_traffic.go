package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// cardWorker is one load worker's card traffic on the cards it owns.
type cardWorker struct {
	c     *client
	runID string
	w     int
	seq   int
	cards []*benchCard
	m     mix
	res   *cardResult
	mine  []*cardTx // the transactions this worker's messages made
	// last is the answer to the last simulation sent, on lastCard.
	last     simAnswer
	lastCard string
}

func newCardWorker(c *client, runID string, w, workers int, cards []*benchCard, m mix) *cardWorker {
	cw := &cardWorker{c: c, runID: runID, w: w, m: m, res: newCardResult()}
	for i, card := range cards {
		if i%workers == w {
			cw.cards = append(cw.cards, card)
		}
	}
	cw.res.Cards = cw.cards
	return cw
}

// simAnswer is what the bench reads of a simulation's 202: the
// transaction the message makes or acts on, and the network's token. A
// synchronous network answers the transaction as the message left it; an
// asynchronous one answers the queued message (its id, and its
// cardTransactionId: the transaction an authorization or a return will
// make, 404 until then) and at most the transaction as it was at
// acceptance. Only the id is used: the outcome is read back.
type simAnswer struct {
	TxID, Token, MessageID string
}

type sendOutcome int

const (
	accepted   sendOutcome = iota
	refused                // a definitive 4xx: nothing happened
	unresolved             // no definitive answer: it may or may not apply
)

// send posts one simulation with its own key, retried with it until
// definitive (a crash in between replays the recorded answer).
func (cw *cardWorker) send(ctx context.Context, cardID, op string, body map[string]any) (simAnswer, sendOutcome) {
	cw.seq++
	key := fmt.Sprintf("%s-card-%d-%d", cw.runID, cw.w, cw.seq)
	r, n, err := cw.c.doRetry(ctx, "POST", "/sandbox/cards/"+cardID+"/simulate/"+op, body, key)
	cw.res.Retries += int64(n)
	if err != nil {
		cw.res.Unresolved++
		return simAnswer{}, unresolved
	}
	if r.Status != http.StatusAccepted {
		cw.res.Refused[op+" "+r.Code()]++
		return simAnswer{}, refused
	}
	var a struct {
		Token   string `json:"issuerTransactionToken"`
		Message *struct {
			ID                string `json:"id"`
			CardTransactionID string `json:"cardTransactionId"`
		} `json:"message"`
		Transaction *struct {
			ID string `json:"id"`
		} `json:"transaction"`
	}
	if json.Unmarshal(r.Body, &a) != nil {
		cw.res.Refused[op+" BAD_RESPONSE"]++
		return simAnswer{}, refused
	}
	out := simAnswer{Token: a.Token}
	switch {
	case a.Message != nil && a.Message.CardTransactionID != "":
		out.TxID, out.MessageID = a.Message.CardTransactionID, a.Message.ID
	case a.Transaction != nil:
		out.TxID = a.Transaction.ID
	}
	cw.last, cw.lastCard = out, cardID
	if out.MessageID != "" {
		return out, cw.applied(ctx, cardID, op, out.MessageID)
	}
	return out, accepted
}

// await reads a card transaction until ok holds or the wait ends: a
// simulation may apply in the background after its 202. A transaction not
// there yet (404) is read again. It answers the last view read.
func (cw *cardWorker) await(ctx context.Context, txID string, ok func(cardTxView) bool) (cardTxView, bool) {
	deadline := time.Now().Add(cw.m.CardWait)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		v, err := getCardTx(ctx, cw.c, txID)
		if err == nil && ok(v) {
			return v, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return v, false
		}
		time.Sleep(pause)
	}
}

// txOf names the transaction a simulation made: from its answer, else the
// card's transaction with the answer's token (read until it shows).
func (cw *cardWorker) txOf(ctx context.Context, cardID string, a simAnswer) string {
	if a.TxID != "" || a.Token == "" {
		return a.TxID
	}
	deadline := time.Now().Add(cw.m.CardWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if id := findByToken(ctx, cw.c, cardID, a.Token); id != "" {
			return id
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

// findByToken pages through the card's transactions for the one the
// network's token names.
func findByToken(ctx context.Context, c *client, cardID, token string) string {
	q := url.Values{"cardId": {cardID}, "type": {"CARD"}, "limit": {"100"}}
	for {
		var page struct {
			Data       []json.RawMessage `json:"data"`
			HasMore    bool              `json:"hasMore"`
			NextCursor string            `json:"nextCursor"`
		}
		if c.must(ctx, "GET", "/transactions?"+q.Encode(), nil, http.StatusOK, &page) != nil {
			return ""
		}
		for _, raw := range page.Data {
			// A return's answer names its row by id (internal/cards:
			// Return), the others by the row's issuerTransactionToken.
			if v, err := decodeCardTx(raw, false); err == nil && (v.Token == token || v.ID == token) {
				return v.ID
			}
		}
		if !page.HasMore || page.NextCursor == "" {
			return ""
		}
		q.Set("cursor", page.NextCursor)
	}
}

// settled reports whether a new transaction shows the status its first
// message leaves (not an intermediate one of a background network).
func settled(v cardTxView) bool {
	switch v.Status {
	case stAuthorized, stSettled, stDeclined, stPartial, stVoided, "EXCEPTION":
		return true
	}
	return false
}

// expect reads t until it shows the model's after, then takes after as t.
// A refusal, or another outcome by the end of the wait, is a mismatch and
// leaves t uncertain.
func (cw *cardWorker) expect(ctx context.Context, t *cardTx, what string, after cardTx, out sendOutcome) bool {
	switch out {
	case unresolved:
		t.Uncertain = true
		return false
	case refused:
		cw.res.mismatch("%s on %s refused; the model expected it to apply", what, t.ID)
		return false
	}
	v, ok := cw.await(ctx, t.ID, func(v cardTxView) bool { return compareCardTx(&after, v) == "" })
	if !ok {
		cw.res.mismatch("after %s: %s%s", what, compareCardTx(&after, v), cw.lastMessage(ctx))
		t.Uncertain = true
		return false
	}
	*t = after
	cw.res.Ops[what]++
	return true
}

// lastMessage describes the outcome of the last simulation's message when
// the network queued it (an asynchronous network), for a mismatch's
// detail; "" otherwise.
func (cw *cardWorker) lastMessage(ctx context.Context) string {
	if cw.last.MessageID == "" {
		return ""
	}
	r, _, err := cw.c.doRetry(ctx, "GET", "/sandbox/cards/"+cw.lastCard+"/messages/"+cw.last.MessageID, nil, "")
	if err != nil {
		return "; its message: " + err.Error()
	}
	return fmt.Sprintf("; its message %s: %d %s", cw.last.MessageID, r.Status, r.Body)
}

// applied waits until a queued message (an asynchronous network) is no
// longer PENDING: APPLIED is accepted; FAILED is refused (the card
// runner's refusal: nothing moved); still PENDING at the end of the wait
// is a mismatch, left unresolved. Waiting for the message, not the
// transaction, also covers effects GET /transactions does not show (a
// partial reversal changes only what is held).
func (cw *cardWorker) applied(ctx context.Context, cardID, op, msgID string) sendOutcome {
	deadline := time.Now().Add(cw.m.CardWait)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		var m struct {
			Status  string `json:"status"`
			Failure struct {
				Code string `json:"code"`
			} `json:"failure"`
		}
		err := cw.c.must(ctx, "GET", "/sandbox/cards/"+cardID+"/messages/"+msgID, nil, http.StatusOK, &m)
		switch {
		case err == nil && m.Status == "APPLIED":
			return accepted
		case err == nil && m.Status == "FAILED":
			cw.res.Refused[op+" FAILED "+m.Failure.Code]++
			return refused
		case time.Now().After(deadline) || ctx.Err() != nil:
			cw.res.mismatch("%s: message %s not applied within %s (%s, %v)", op, msgID, cw.m.CardWait, m.Status, err)
			return unresolved
		}
		time.Sleep(pause)
	}
}
