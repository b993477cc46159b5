package main

import (
	"context"
	"math/rand/v2"
)

// maxClosesPerWorker bounds how many cards a worker closes (each gets a
// replacement).
const maxClosesPerWorker = 2

func (cw *cardWorker) card(id string) *benchCard {
	for _, c := range cw.cards {
		if c.ID == id {
			return c
		}
	}
	panic("paymentsbench: a transaction of a card the worker does not own: " + id)
}

// step sends one card message, or changes one card, on the worker's cards.
func (cw *cardWorker) step(ctx context.Context, rng *rand.Rand) {
	var open, returnable []*cardTx
	var withReturns []*cardTx
	for _, t := range cw.mine {
		switch {
		case t.Uncertain || cw.card(t.CardID).Status == "CLOSED":
		case t.open():
			open = append(open, t)
		case t.returnable():
			returnable = append(returnable, t)
		}
		if !t.Uncertain && cw.card(t.CardID).Status != "CLOSED" && t.returned() > 0 {
			withReturns = append(withReturns, t)
		}
	}
	x := rng.Float64()
	switch {
	case x < 0.04:
		cw.change(ctx, rng)
	case x < 0.50 && len(open) > 0:
		cw.act(ctx, rng, open[rng.IntN(len(open))])
	case x >= 0.50 && x < 0.58 && len(returnable) > 0:
		t := returnable[rng.IntN(len(returnable))]
		cw.returnSome(ctx, t, 1+rng.Int64N(t.Settled-t.returned()))
	case x >= 0.58 && x < 0.61 && len(withReturns) > 0:
		t := withReturns[rng.IntN(len(withReturns))]
		for i, r := range t.Returns {
			if !r.Reversed {
				cw.reverseReturn(ctx, t, i)
				break
			}
		}
	default:
		c := cw.pickCard(rng)
		cw.authorize(ctx, c, cw.message(rng, c))
	}
}

// pickCard picks a card for an authorization: mostly an ACTIVE one, now
// and then any (a frozen or closed one must decline).
func (cw *cardWorker) pickCard(rng *rand.Rand) *benchCard {
	var active []*benchCard
	for _, c := range cw.cards {
		if c.Status == "ACTIVE" {
			active = append(active, c)
		}
	}
	if len(active) == 0 || rng.Float64() < 0.15 {
		return cw.cards[rng.IntN(len(cw.cards))]
	}
	return active[rng.IntN(len(active))]
}

// message makes an authorization-family message: mostly purchases, some
// single-message purchases, merchant credits (authorization, advice,
// single-message), and some made to decline (blocked MCC, the sandbox's
// insufficient-funds descriptor, over the per-transaction limit).
func (cw *cardWorker) message(rng *rand.Rand, c *benchCard) authMsg {
	m := authMsg{Op: "authorization", Amount: 1 + rng.Int64N(cw.m.MaxAmount), MCC: benchMCC, Descriptor: benchMerchant}
	switch x := rng.Float64(); {
	case x < 0.10:
		m.Op = "financial_authorization"
	case x < 0.18:
		m.Op = "credit_authorization"
	case x < 0.22:
		m.Op = "credit_authorization_advice"
	case x < 0.27:
		m.Op = "financial_credit_authorization"
	case x < 0.31:
		m.MCC = blockedMCC
	case x < 0.35:
		m.Descriptor = benchMerchant + " " + nsfSuffix
	case x < 0.39 && c.PerTxn > 0:
		m.Amount = c.PerTxn + 1 + rng.Int64N(cw.m.MaxAmount)
	}
	return m
}

// authorize sends m on c and reads back the transaction it made, which
// must show the decision the model predicts.
func (cw *cardWorker) authorize(ctx context.Context, c *benchCard, m authMsg) {
	reason := declineReason(c, m)
	tolerant := limitUnsure(c, m)
	a, out := cw.send(ctx, c.ID, m.Op, m.body())
	switch out {
	case refused:
		cw.res.mismatch("%s on card %s refused", m.Op, c.ID)
		return
	case unresolved:
		c.Unsure = true
		return
	}
	id := cw.txOf(ctx, c.ID, a)
	if id == "" {
		cw.res.mismatch("%s on card %s: no transaction with token %q", m.Op, c.ID, a.Token)
		c.Unsure = true
		return
	}
	v, ok := cw.await(ctx, id, settled)
	if ok && tolerant && v.Reason == "SPEND_LIMIT_EXCEEDED" {
		reason = v.Reason // spent more today than the model knows
	}
	t := authorized(c, m, id, reason)
	cw.mine = append(cw.mine, t)
	cw.res.Txs = append(cw.res.Txs, t)
	if msg := compareCardTx(t, v); !ok || msg != "" {
		cw.res.mismatch("%s: %s (read back: %v)%s", m.Op, msg, ok, cw.lastMessage(ctx))
		t.Uncertain = true
		return
	}
	if reason != "" {
		cw.res.Declined[reason]++
	} else {
		cw.res.Ops[m.Op]++
	}
}

// act sends a message on an open transaction: an expiry, a full or partial
// reversal, an incremental authorization or an advice down, a clearing in
// two parts, below, above (purchases) or at what is held.
func (cw *cardWorker) act(ctx context.Context, rng *rand.Rand, t *cardTx) {
	c := cw.card(t.CardID)
	x := rng.Float64()
	switch {
	case x < 0.10:
		cw.on(ctx, t, "clearing", map[string]any{"amount": 0}, "expiry", released(*t, 0))
	case x < 0.20:
		cw.on(ctx, t, "reversal", map[string]any{}, "reversal", released(*t, 0))
	case x < 0.27 && t.Held > 1:
		part := 1 + rng.Int64N(t.Held-1)
		cw.on(ctx, t, "reversal", map[string]any{"amount": part}, "partial reversal", released(*t, part))
	case x < 0.37:
		total := t.Authorized + 1 + rng.Int64N(cw.m.MaxAmount/4+1)
		if !adviceOK(c, t, total) {
			cw.clearAll(ctx, t) // over a limit: the service would refuse it
			return
		}
		delta := total - t.Authorized
		if cw.on(ctx, t, "authorization_advice", map[string]any{"amount": total}, "incremental authorization", advised(*t, total)) && !t.Credit {
			c.Spent += delta
		}
	case x < 0.44 && t.Held > 1:
		total := t.Authorized - 1 - rng.Int64N(t.Held-1)
		cw.on(ctx, t, "authorization_advice", map[string]any{"amount": total}, "advice down", advised(*t, total))
	case x < 0.58 && t.Held > 1:
		part := t.Held / 2
		cw.on(ctx, t, "clearing", map[string]any{"amount": part, "final": false}, "clearing in part", cleared(*t, part, false))
	case x < 0.70 && t.Held > 1:
		part := 1 + rng.Int64N(t.Held-1)
		cw.on(ctx, t, "clearing", map[string]any{"amount": part}, "clearing below the hold", cleared(*t, part, true))
	case x < 0.78 && !t.Credit:
		amount := t.Held + 1 + rng.Int64N(cw.m.MaxAmount/4+1)
		cw.on(ctx, t, "clearing", map[string]any{"amount": amount}, "clearing above the hold", cleared(*t, amount, true))
	default:
		cw.clearAll(ctx, t)
	}
}

// clearAll clears what the transaction holds, finally.
func (cw *cardWorker) clearAll(ctx context.Context, t *cardTx) bool {
	return cw.on(ctx, t, "clearing", map[string]any{"amount": t.Held}, "clearing", cleared(*t, t.Held, true))
}

// on sends op on t; after is what the model says it leaves.
func (cw *cardWorker) on(ctx context.Context, t *cardTx, op string, body map[string]any, what string, after cardTx) bool {
	body["cardTransactionId"] = t.ID
	_, out := cw.send(ctx, t.CardID, op, body)
	if out == unresolved {
		cw.card(t.CardID).Unsure = true
	}
	return cw.expect(ctx, t, what, after, out)
}
