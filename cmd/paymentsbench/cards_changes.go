package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
)

// returnSome returns amount of a settled purchase: a new CREDIT row of it,
// and its refundedAmount up by amount.
func (cw *cardWorker) returnSome(ctx context.Context, t *cardTx, amount int64) {
	a, out := cw.send(ctx, t.CardID, "return", map[string]any{"cardTransactionId": t.ID, "amount": amount})
	if out != accepted {
		cw.expect(ctx, t, "return", *t, out)
		return
	}
	id := cw.txOf(ctx, t.CardID, a)
	if id == "" {
		cw.res.mismatch("return on %s: no transaction with token %q", t.ID, a.Token)
		t.Uncertain = true
		return
	}
	after := withReturn(*t, id, amount)
	cw.returnRow(ctx, t, after, len(after.Returns)-1, "return")
}

// reverseReturn reverses the i-th return of t: the return row is VOIDED
// and the purchase's refundedAmount goes down again.
func (cw *cardWorker) reverseReturn(ctx context.Context, t *cardTx, i int) {
	_, out := cw.send(ctx, t.CardID, "return_reversal", map[string]any{"cardTransactionId": t.Returns[i].ID})
	after := withoutReturn(*t, i)
	if out != accepted {
		cw.expect(ctx, t, "return_reversal", after, out)
		return
	}
	cw.returnRow(ctx, t, after, i, "return_reversal")
}

// returnRow reads the i-th return row of after until it shows as the model
// says, then the purchase.
func (cw *cardWorker) returnRow(ctx context.Context, t *cardTx, after cardTx, i int, what string) {
	r := after.Returns[i]
	if v, ok := cw.await(ctx, r.ID, func(v cardTxView) bool { return returnProblem(&after, r, v) == "" }); !ok {
		cw.res.mismatch("after %s: %s%s", what, returnProblem(&after, r, v), cw.lastMessage(ctx))
		t.Uncertain = true
		return
	}
	cw.expect(ctx, t, what, after, accepted)
}

// change unfreezes a frozen card of the worker if there is one, else
// freezes or (now and then) closes one.
func (cw *cardWorker) change(ctx context.Context, rng *rand.Rand) {
	var live []*benchCard
	for _, c := range cw.cards {
		switch c.Status {
		case "FROZEN":
			cw.setStatus(ctx, c, "ACTIVE")
			return
		case "ACTIVE":
			live = append(live, c)
		}
	}
	if len(live) == 0 {
		return
	}
	c := live[rng.IntN(len(live))]
	if rng.Float64() < 0.4 && cw.res.Ops["card CLOSED"] < maxClosesPerWorker {
		cw.close(ctx, c)
		return
	}
	cw.setStatus(ctx, c, "FROZEN")
}

// setStatus asks for a card status with PATCH /cards/{id} and reads the
// card back. After a crash the retry of an applied change is refused
// (409): the card's status says whether it applied.
func (cw *cardWorker) setStatus(ctx context.Context, c *benchCard, status string) bool {
	r, _, err := cw.c.doRetry(ctx, "PATCH", "/cards/"+c.ID, map[string]any{"status": status}, "")
	got, gerr := cardStatus(ctx, cw.c, c.ID)
	switch {
	case gerr != nil:
		cw.res.mismatch("card %s after PATCH status %s: %v", c.ID, status, gerr)
		return false
	case got != status:
		cw.res.mismatch("card %s after PATCH status %s (%d %s, %v): %s", c.ID, status, r.Status, r.Code(), err, got)
		c.Status = got
		return false
	case err == nil && r.Status != http.StatusOK && r.Status != http.StatusConflict:
		cw.res.mismatch("card %s: PATCH status %s answered %d %s, yet it applied", c.ID, status, r.Status, r.Code())
	}
	c.Status = status
	cw.res.Ops["card "+status]++
	return true
}

// close closes c: its open authorizations are reconciled (released), and
// its customer gets a replacement card with the same limits.
func (cw *cardWorker) close(ctx context.Context, c *benchCard) {
	if !cw.setStatus(ctx, c, "CLOSED") {
		return
	}
	for _, t := range cw.mine {
		if t.CardID == c.ID && t.open() && !t.Uncertain {
			cw.expect(ctx, t, "closing the card", released(*t, 0), accepted)
		}
	}
	cw.seq++
	n, err := issueCard(ctx, cw.c, fmt.Sprintf("%s-card-w%d-%d", cw.runID, cw.w, cw.seq),
		account{CustomerID: c.CustomerID, AccountID: c.AccountID}, c.PerTxn, c.PerDay)
	if err != nil {
		cw.res.mismatch("replacement card: %v", err)
		return
	}
	cw.cards = append(cw.cards, n)
	cw.res.Cards = cw.cards
	cw.res.Ops["card issued"]++
}

// settle clears every open authorization of the worker after the load, so
// nothing is held when the checks run, and reads each back.
func (cw *cardWorker) settle(ctx context.Context) {
	for _, t := range cw.mine {
		if t.open() && !t.Uncertain {
			cw.clearAll(ctx, t)
			cw.res.Drained++
		}
	}
}
