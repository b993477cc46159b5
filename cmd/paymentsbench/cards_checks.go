package main

import (
	"context"
	"fmt"
	"net/http"
)

// withCards adjusts the USD expectation for card traffic: settled purchases
// left the run's USD accounts, returns came back (cardMoney). Without card
// traffic it returns es unchanged.
func withCards(es []expected, cr *cardResult) []expected {
	if cr == nil {
		return es
	}
	settled, returned, _, uncertain := cardMoney(cr.Txs)
	for i := range es {
		if es[i].currency != "USD" {
			continue
		}
		es[i].want += returned - settled
		if uncertain > 0 || cr.Unresolved > 0 {
			es[i].note += fmt.Sprintf("; %d card transactions with an unresolved message make this inexact", uncertain)
		}
	}
	return es
}

// cardAPIChecks reads every card transaction the run made through GET
// /transactions/{id}: each authorization answered 202 (crash mode: also
// after the restarts) exists as a CARD transaction of its card with the
// status, settledAmount and refundedAmount the model expects, and each
// return is a CREDIT row of the purchase for what the model returned.
func cardAPIChecks(ctx context.Context, c *client, cr *cardResult) []CheckResult {
	if cr == nil {
		return nil
	}
	var bad, returns, badReturns int
	var ex, exReturn string
	for _, t := range cr.Txs {
		v, err := getCardTx(ctx, c, t.ID)
		if msg := cardTxProblem(t, v, err); msg != "" {
			bad++
			ex = msg
		}
		var sum int64
		for _, id := range t.Returns {
			returns++
			r, err := getCardTx(ctx, c, id)
			switch {
			case err != nil:
				badReturns, exReturn = badReturns+1, err.Error()
			case r.OriginalTransactionID != t.ID || r.Status != "SETTLED":
				badReturns, exReturn = badReturns+1, fmt.Sprintf("return %s: original %q status %s", id, r.OriginalTransactionID, r.Status)
			default:
				sum += r.Settled
			}
		}
		if !t.Uncertain && sum != t.Returned && badReturns == 0 {
			badReturns, exReturn = badReturns+1, fmt.Sprintf("%s: returns settle %d, model returned %d", t.ID, sum, t.Returned)
		}
	}
	out := []CheckResult{
		result(fmt.Sprintf("api: each of %d acknowledged card authorizations present with the model's status, settled and refunded amounts", len(cr.Txs)), bad, ex),
		result(fmt.Sprintf("api: each of %d acknowledged card returns is a SETTLED row of its purchase, summing to its refundedAmount", returns), badReturns, exReturn),
	}
	return out
}

// cardTxProblem compares one read-back purchase with the model ("" when
// they agree). An uncertain transaction need only exist.
func cardTxProblem(t *cardTx, v cardTxView, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case v.Type != "CARD":
		return fmt.Sprintf("%s: type %s", t.ID, v.Type)
	case t.Uncertain:
		return ""
	}
	return compareCardTx(t, v)
}

func getCardTx(ctx context.Context, c *client, txID string) (cardTxView, error) {
	r, _, err := c.doRetry(ctx, "GET", "/transactions/"+txID, nil, "")
	if err != nil {
		return cardTxView{}, err
	}
	if r.Status != http.StatusOK {
		return cardTxView{}, fmt.Errorf("GET /transactions/%s: %d %s", txID, r.Status, r.Code())
	}
	return decodeCardTx(r.Body, false)
}

func result(name string, bad int, example string) CheckResult {
	r := CheckResult{Name: name, Pass: bad == 0}
	if bad > 0 {
		r.Detail = fmt.Sprintf("%d bad, e.g. %s", bad, example)
	}
	return r
}

// cardDBChecks: every balance's pending debits and credits equal its
// unresolved hold postings; the run's USD accounts hold what the model
// still holds (nothing once drained); and the database has one CARD row per
// acknowledged authorization and return (more only for unresolved
// messages).
func (c *dbChecker) cardDBChecks(ctx context.Context, s setupResult, cr *cardResult) []CheckResult {
	if cr == nil {
		return nil
	}
	var out []CheckResult
	n, err := c.count(ctx, `SELECT COUNT(*) FROM ledger_balances b LEFT JOIN (
			SELECT p.account_id,
				SUM(CASE WHEN p.amount < 0 THEN -p.amount ELSE 0 END) AS d,
				SUM(CASE WHEN p.amount > 0 THEN p.amount ELSE 0 END) AS c
			FROM ledger_postings p
			WHERE p.pending AND p.platform_id = ? AND p.env = ?
			AND NOT EXISTS (SELECT 1 FROM ledger_transfers r WHERE r.hold_id = p.transfer_id)
			GROUP BY p.account_id) h ON h.account_id = b.account_id
		WHERE b.platform_id = ? AND b.env = ? AND (b.pending_debits <> COALESCE(h.d, 0) OR b.pending_credits <> COALESCE(h.c, 0))`,
		c.platform, c.env, c.platform, c.env)
	out = append(out, countResult("db: every balance's pending debits and credits equal its open hold postings", n, err, "balances differ from their holds"))

	_, _, held, _ := cardMoney(cr.Txs)
	var ids []string
	for _, a := range s.Accounts {
		ids = append(ids, a.AccountID)
	}
	pending, err := c.PendingDebits(ctx, ids)
	r := CheckResult{Name: fmt.Sprintf("db: the run's USD accounts hold %d cents for cards, as the model says", held)}
	switch {
	case err != nil:
		r.Detail = err.Error()
	case pending != held:
		r.Detail = fmt.Sprintf("pending debits %d", pending)
	default:
		r.Pass = true
	}
	out = append(out, r)

	rows, err := c.count(ctx, `SELECT COUNT(*) FROM transactions WHERE platform_id = ? AND env = ? AND card_id <> ''`, c.platform, c.env)
	want := int64(len(cr.Txs))
	for _, t := range cr.Txs {
		want += int64(len(t.Returns))
	}
	r = CheckResult{Name: fmt.Sprintf("db: card transaction rows (%d) == acknowledged authorizations and returns (%d)", rows, want)}
	switch {
	case err != nil:
		r.Detail = err.Error()
	case rows == want:
		r.Pass = true
	case rows > want && rows-want <= cr.Unresolved:
		r.Pass, r.Detail = true, fmt.Sprintf("%d unresolved messages committed without the client learning it", rows-want)
	default:
		r.Detail = fmt.Sprintf("difference %d, unresolved %d", rows-want, cr.Unresolved)
	}
	return append(out, r)
}

func countResult(name string, n int64, err error, what string) CheckResult {
	switch {
	case err != nil:
		return CheckResult{Name: name, Detail: err.Error()}
	case n != 0:
		return CheckResult{Name: name, Detail: fmt.Sprintf("%d %s", n, what)}
	}
	return CheckResult{Name: name, Pass: true}
}
