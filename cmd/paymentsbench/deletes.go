package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Deleting customers during the load (-delete-every, issue 25): money must
// never end on a deleted customer, where nobody could see or move it.
//
// Every interval the deleter retires one customer, from the end of the list
// (the first two thirds, which hold the statement-checked accounts and the
// sink, account 0, are never deleted): the load stops sending from it but keeps
// paying into it, so credits race the delete. The deleter moves the
// customer's balances to the sink with ordinary quotes (acknowledged
// transfers like the load's, under the run's keys) and deletes it; the
// service refuses the delete (409) while money is there, pending payouts
// included, and the deleter drains and tries again. Once deleted, the load
// stops paying into it; credits that raced the delete were refused with 404
// ACCOUNT_NOT_FOUND. Money that still arrives for it later (the refund of a
// payout returned after the delete) goes to the platform's suspense account,
// which the end-of-run checks count.

// lifecycle is what the load may do with each account.
type lifecycle struct {
	retiring []atomic.Bool // no longer a sender
	deleted  []atomic.Bool // no longer a receiver either
}

func newLifecycle(n int) *lifecycle {
	return &lifecycle{retiring: make([]atomic.Bool, n), deleted: make([]atomic.Bool, n)}
}

// usable reports whether the load may send from i to j (a nil lifecycle:
// always).
func (l *lifecycle) usable(i, j int) bool {
	return l == nil || (!l.retiring[i].Load() && !l.deleted[j].Load())
}

// deleteResult is what the deleter did.
type deleteResult struct {
	Deleted    []int // indexes of the deleted customers
	Refused    int   // deletes answered 409: money had arrived, or a payout was in flight
	Drains     []ack // the acknowledged drain transfers and late payouts
	Unresolved int64 // drain transfers whose outcome stayed unknown
	Failed     []string
}

// deleter retires customers during the load.
type deleter struct {
	c     *client
	runID string
	accts []account
	life  *lifecycle
	seq   atomic.Int64
	mu    sync.Mutex
	res   deleteResult
}

// run deletes one customer every interval until ctx ends (the load's
// duration); each deletion may take longer than that (work continues until
// hard ends).
func (d *deleter) run(ctx, hard context.Context, every time.Duration, logf func(string, ...any)) deleteResult {
	next := len(d.accts) - 1
	floor := 2 * len(d.accts) / 3 // apiChecks reads the statements of 0, n/3 and 2n/3
	t := time.NewTicker(every)
	defer t.Stop()
	for next > floor {
		select {
		case <-ctx.Done():
			return d.res
		case <-t.C:
		}
		if err := d.retire(hard, next); err != nil {
			d.res.Failed = append(d.res.Failed, fmt.Sprintf("customer %d: %v", next, err))
			logf("delete customer %d: %v", next, err)
		}
		next--
	}
	return d.res
}

// retire stops sends from account i, drains it and deletes its customer,
// draining again while the delete is refused.
func (d *deleter) retire(ctx context.Context, i int) error {
	a := d.accts[i]
	d.life.retiring[i].Store(true)
	if a.ExternalAccountID != "" {
		if err := d.latePayout(ctx, a); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, pair := range [][2]string{{a.AccountID, d.accts[0].AccountID}, {a.EURAccountID, d.accts[0].EURAccountID}} {
			if pair[0] == "" {
				continue
			}
			if err := d.drain(ctx, a.CustomerID, pair[0], pair[1]); err != nil {
				return err
			}
		}
		r, _, err := d.c.doRetry(ctx, "DELETE", "/customers/"+a.CustomerID, nil, "")
		switch {
		case err != nil:
			return err
		case r.Status == http.StatusOK, r.Status == http.StatusNotFound && r.Code() == "CUSTOMER_NOT_FOUND":
			// 404: an earlier attempt committed before a crash hid its answer.
			d.life.deleted[i].Store(true)
			d.res.Deleted = append(d.res.Deleted, i)
			return nil
		case r.Status == http.StatusConflict:
			d.res.Refused++
			time.Sleep(100 * time.Millisecond)
		default:
			return fmt.Errorf("DELETE: %d %s", r.Status, r.Body)
		}
	}
	return fmt.Errorf("still holding money after 60 s")
}

// latePayout sends, from a customer about to be deleted, a payout whose
// amount ends in 906: the sandbox's ACH settles it, then returns it a few
// seconds later. The delete waits for the settlement (the hold blocks it),
// so the return usually arrives after the delete, and its refund must go to
// the platform's suspense account; the conservation checks count it there.
func (d *deleter) latePayout(ctx context.Context, a account) error {
	const amount = 1906
	key := fmt.Sprintf("%s-q-late-%d", d.runID, d.seq.Add(1))
	body := map[string]any{
		"source":             map[string]any{"sourceType": "ACCOUNT", "accountId": a.AccountID},
		"destination":        map[string]any{"destinationType": "ACCOUNT", "accountId": a.ExternalAccountID},
		"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "immediatelyExecute": true,
	}
	r, _, err := d.c.doRetry(ctx, "POST", "/quotes", body, key)
	switch {
	case err != nil:
		d.res.Unresolved++
		return nil
	case r.Status != http.StatusOK:
		return fmt.Errorf("late payout: %d %s", r.Status, r.Body)
	}
	payout, err := decodeQuoteAck(r.Body, key, amount)
	if err != nil {
		return fmt.Errorf("late payout: %w", err)
	}
	payout.Payout = true
	d.res.Drains = append(d.res.Drains, payout)
	return nil
}

// decodeQuoteAck reads the answer to an executed quote (POST /quotes with
// immediatelyExecute) sent under key for amount, as the ack the
// conservation checks follow.
func decodeQuoteAck(body []byte, key string, amount int64) (ack, error) {
	var q struct {
		ID                   string `json:"id"`
		TransactionID        string `json:"transactionId"`
		TotalSendingAmount   int64  `json:"totalSendingAmount"`
		TotalReceivingAmount int64  `json:"totalReceivingAmount"`
	}
	if err := json.Unmarshal(body, &q); err != nil || q.ID == "" {
		return ack{}, fmt.Errorf("bad answer %s", body)
	}
	return ack{Key: key, QuoteID: q.ID, TransactionID: q.TransactionID, Amount: amount,
		Sent: q.TotalSendingAmount, Received: q.TotalReceivingAmount}, nil
}

// drain moves an account's available balance to the sink account with one
// quote (nothing when it is empty). A quote refused because the balance
// changed meanwhile is left for the next round.
func (d *deleter) drain(ctx context.Context, customerID, from, to string) error {
	avail, err := d.available(ctx, customerID, from)
	if err != nil || avail <= 0 {
		return err
	}
	key := fmt.Sprintf("%s-q-drain-%d", d.runID, d.seq.Add(1))
	body := map[string]any{
		"source":             map[string]any{"sourceType": "ACCOUNT", "accountId": from},
		"destination":        map[string]any{"destinationType": "ACCOUNT", "accountId": to},
		"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": avail, "immediatelyExecute": true,
	}
	r, _, err := d.c.doRetry(ctx, "POST", "/quotes", body, key)
	switch {
	case err != nil:
		d.res.Unresolved++
		return nil
	case r.Status == http.StatusOK:
		a, err := decodeQuoteAck(r.Body, key, avail)
		if err != nil {
			return fmt.Errorf("drain quote: %w", err)
		}
		d.res.Drains = append(d.res.Drains, a)
		return nil
	case r.Code() == "INSUFFICIENT_FUNDS":
		return nil
	}
	return fmt.Errorf("drain quote: %d %s", r.Status, r.Body)
}

// available reads an account's available balance through the API.
func (d *deleter) available(ctx context.Context, customerID, accountID string) (int64, error) {
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			Balance struct {
				Amount int64 `json:"amount"`
			} `json:"balance"`
		} `json:"data"`
	}
	r, _, err := d.c.doRetry(ctx, "GET", "/customers/internal-accounts?customerId="+customerID, nil, "")
	if err != nil {
		return 0, err
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &list) != nil {
		return 0, fmt.Errorf("list accounts: %d %s", r.Status, r.Body)
	}
	for _, x := range list.Data {
		if x.ID == accountID {
			return x.Balance.Amount, nil
		}
	}
	return 0, nil
}

// suspenseTotal is the balance of the platform's suspense account in
// currency, read through the API (0 when there is none).
func suspenseTotal(ctx context.Context, c *client, currency string) (int64, error) {
	var list struct {
		Data []struct {
			Suspense     bool `json:"suspense"`
			TotalBalance struct {
				Amount int64 `json:"amount"`
			} `json:"totalBalance"`
		} `json:"data"`
	}
	if err := c.must(ctx, "GET", "/platform/internal-accounts?currency="+currency, nil, http.StatusOK, &list); err != nil {
		return 0, err
	}
	var total int64
	for _, x := range list.Data {
		if x.Suspense {
			total += x.TotalBalance.Amount
		}
	}
	return total, nil
}

// deletedChecks: every deleted customer is gone from the API (404), and,
// in the database, every deleted customer's ledger accounts hold nothing
// and are closed.
func deletedChecks(ctx context.Context, c *client, chk *dbChecker, s setupResult, deleted []int) []CheckResult {
	var out []CheckResult
	bad, ex := 0, ""
	for _, i := range deleted {
		r, _, err := c.doRetry(ctx, "GET", "/customers/"+s.Accounts[i].CustomerID, nil, "")
		if err != nil || r.Status != http.StatusNotFound {
			bad++
			ex = fmt.Sprintf("%s: %d %v", s.Accounts[i].CustomerID, r.Status, err)
		}
	}
	r := CheckResult{Name: fmt.Sprintf("api: each of the %d deleted customers is gone (404)", len(deleted)), Pass: bad == 0}
	if bad > 0 {
		r.Detail = fmt.Sprintf("%d still visible, e.g. %s", bad, ex)
	}
	out = append(out, r)
	if chk == nil {
		return out
	}
	n, err := chk.count(ctx, `SELECT COUNT(*) FROM internal_accounts ia
		JOIN customers cu ON cu.id = ia.customer_id
		JOIN ledger_balances b ON b.account_id = ia.ledger_account_id
		WHERE ia.platform_id = ? AND ia.env = ? AND cu.deleted_at IS NOT NULL
		AND (b.posted <> 0 OR b.pending_debits <> 0 OR b.pending_credits <> 0 OR NOT b.closed)`, chk.platform, chk.env)
	r = CheckResult{Name: "db: every deleted customer's accounts are closed and hold nothing"}
	switch {
	case err != nil:
		r.Detail = err.Error()
	case n != 0:
		r.Detail = fmt.Sprintf("%d accounts of deleted customers are open or hold money", n)
	default:
		r.Pass = true
	}
	return append(out, r)
}

// SuspenseTotal sums the posted balances of the platform's suspense
// accounts in currency, in the database.
func (c *dbChecker) SuspenseTotal(ctx context.Context, currency string) (int64, error) {
	return c.count(ctx, `SELECT COALESCE(SUM(b.posted), 0) FROM internal_accounts ia
		JOIN ledger_balances b ON b.account_id = ia.ledger_account_id
		WHERE ia.platform_id = ? AND ia.env = ? AND ia.owner_key = 'SUSPENSE' AND ia.currency = ?`,
		c.platform, c.env, currency)
}
