package main

import (
	"context"
	"fmt"
	"net/http"
)

// withCards adjusts the USD expectation for card traffic: settled
// purchases left the run's USD accounts, merchant credits and returns that
// stayed came in (cardMoney). Without card traffic it returns es unchanged.
func withCards(es []expected, cr *cardResult) []expected {
	if cr == nil {
		return es
	}
	out, in, _, _, uncertain := cardMoney(cr.Txs)
	for i := range es {
		if es[i].currency != "USD" {
			continue
		}
		es[i].want += in - out
		if uncertain > 0 || cr.Unresolved > 0 {
			es[i].note += fmt.Sprintf("; %d card transactions uncertain (a message unresolved, or an outcome not as modelled) make this inexact", uncertain)
		}
	}
	return es
}

// cardAPIChecks: every outcome the traffic read back was the model's; and,
// read again now that all card work has settled, every card transaction
// the run made exists as a CARD transaction of its card with the status,
// decline reason, direction and amounts the model has, and each return is
// a row of its purchase, SETTLED or (reversed) VOIDED, for its amount.
func cardAPIChecks(ctx context.Context, c *client, cr *cardResult) []CheckResult {
	if cr == nil {
		return nil
	}
	var bad, returns, badReturns int
	var ex, exReturn string
	for _, t := range cr.Txs {
		v, err := getCardTx(ctx, c, t.ID)
		if msg := cardTxProblem(t, v, err); msg != "" {
			bad, ex = bad+1, msg
		}
		for _, r := range t.Returns {
			returns++
			v, err := getCardTx(ctx, c, r.ID)
			if err == nil && t.Uncertain {
				continue
			}
			if err == nil {
				if msg := returnProblem(t, r, v); msg != "" {
					err = fmt.Errorf("%s", msg)
				}
			}
			if err != nil {
				badReturns, exReturn = badReturns+1, err.Error()
			}
		}
	}
	s := cr.summary(len(cr.Cards))
	return []CheckResult{
		result(fmt.Sprintf("model: every card message and card change had the outcome the model predicted (%d declines among them)", s.declined()), cr.Mismatches, cr.Mismatch),
		result(fmt.Sprintf("api: each of %d card transactions shows the model's status, decline reason, direction and amounts", len(cr.Txs)), bad, ex),
		result(fmt.Sprintf("api: each of %d card returns is a row of its purchase, SETTLED or reversed (VOIDED), for its amount", returns), badReturns, exReturn),
	}
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
// still holds (nothing once settled); declined card transactions moved no
// money; and the database has one CARD row per authorization and return
// the model knows (more only for unresolved messages).
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

	out = append(out, c.cardHeldCheck(ctx, s, cr), c.declinesMovedNothing(ctx, cr))
	rows, err := c.count(ctx, `SELECT COUNT(*) FROM transactions WHERE platform_id = ? AND env = ? AND card_id <> ''`, c.platform, c.env)
	want := int64(len(cr.Txs))
	for _, t := range cr.Txs {
		want += int64(len(t.Returns))
	}
	r := CheckResult{Name: fmt.Sprintf("db: card transaction rows (%d) == acknowledged authorizations and returns (%d)", rows, want)}
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

// cardHeldCheck: the run's USD accounts' pending debits and credits are
// what the model's open purchases and merchant credits hold.
func (c *dbChecker) cardHeldCheck(ctx context.Context, s setupResult, cr *cardResult) CheckResult {
	_, _, heldOut, heldIn, _ := cardMoney(cr.Txs)
	var ids []string
	for _, a := range s.Accounts {
		ids = append(ids, a.AccountID)
	}
	r := CheckResult{Name: fmt.Sprintf("db: the run's USD accounts hold %d cents for purchases and %d for merchant credits, as the model says", heldOut, heldIn)}
	debits, err := c.PendingDebits(ctx, ids)
	var credits int64
	if err == nil {
		credits, err = c.accountsSum(ctx, ids, "b.pending_credits")
	}
	switch {
	case err != nil:
		r.Detail = err.Error()
	case debits != heldOut || credits != heldIn:
		r.Detail = fmt.Sprintf("pending debits %d, pending credits %d", debits, credits)
	default:
		r.Pass = true
	}
	return r
}

// declinesMovedNothing: no ledger transfer names a declined card
// transaction, and the database has every decline the model saw.
func (c *dbChecker) declinesMovedNothing(ctx context.Context, cr *cardResult) CheckResult {
	var want int64
	for _, t := range cr.Txs {
		if t.Status == stDeclined {
			want++
		}
	}
	name := fmt.Sprintf("db: the %d declined card transactions moved no money (no ledger transfer names one)", want)
	moved, err := c.count(ctx, `SELECT COUNT(*) FROM ledger_transfers l JOIN transactions t ON t.id = l.reference
		WHERE t.platform_id = ? AND t.env = ? AND t.card_id <> '' AND t.status = 'DECLINED'`, c.platform, c.env)
	if err != nil || moved != 0 {
		return countResult(name, moved, err, "ledger transfers of declined card transactions")
	}
	n, err := c.count(ctx, `SELECT COUNT(*) FROM transactions WHERE platform_id = ? AND env = ? AND card_id <> '' AND status = 'DECLINED'`,
		c.platform, c.env)
	r := countResult(name, 0, err, "")
	if err == nil && n != want && (n < want || n-want > cr.Unresolved) {
		r.Pass, r.Detail = false, fmt.Sprintf("%d DECLINED card rows in the database", n)
	}
	return r
}
