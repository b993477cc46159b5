package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// The batching committer's lock order. A batch (InBatchTx) holds every row
// its fns lock until its one commit, so two batches on one PostgreSQL (two
// workers of a node, or two nodes) that each lock balance rows as their fns
// reach them deadlock as soon as each holds a row the other's next fn
// wants; PostgreSQL then breaks the cycle only after deadlock_timeout (the
// sixth session measured 1 s stalls). So a caller declares, with the
// context it passes to InBatchTx, the balance rows its fn will move
// (WithLedgerLocks), and the batch locks all of its fns' rows in one
// statement, in ascending account-id order, right after it begins: the one
// order LockLedgerAccounts also uses, so no two lockers can wait for each
// other in a cycle. When a fn later locks its rows (ledger.Apply through
// LockLedgerAccounts) they are already the batch's and nothing waits. A fn
// that moves a row it did not declare still works; it only gives up the
// guarantee, and a deadlock then fails its batch, whose fns run again alone.

// declaredLock is one tenant's balance rows a request will move.
type declaredLock struct {
	tenant Tenant
	ids    []string
}

type locksKey struct{}

// WithLedgerLocks declares that the InBatchTx called with the returned
// context moves the balance rows of the tenant's ledger accounts ids (hot
// accounts have none and may be left out).
func WithLedgerLocks(ctx context.Context, t Tenant, ids ...string) context.Context {
	prev := declaredLocks(ctx)
	locks := append(prev[:len(prev):len(prev)], declaredLock{tenant: t, ids: ids})
	return context.WithValue(ctx, locksKey{}, locks)
}

func declaredLocks(ctx context.Context) []declaredLock {
	l, _ := ctx.Value(locksKey{}).([]declaredLock)
	return l
}

// lockDeclared locks, on PostgreSQL, the balance rows the batch's requests
// declared, in account-id order, in one statement (chunked far beyond any
// batch's size). SQLite has one writer and needs no lock.
//
// A batch of one request needs no such statement: its fn's own
// LockLedgerAccounts takes the rows in the same order.
func (q Q) lockDeclared(ctx context.Context, batch []*batchReq) error {
	if q.engine != Postgres || len(batch) < 2 {
		return nil
	}
	type row struct{ platformID, env, id string }
	var rows []row
	for _, r := range batch {
		for _, l := range r.locks {
			for _, id := range l.ids {
				if id != "" {
					rows = append(rows, row{l.tenant.PlatformID, l.tenant.Env, id})
				}
			}
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.platformID, b.platformID), cmp.Compare(a.env, b.env))
	})
	rows = slices.Compact(rows)
	const chunk = 1000
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		args := make([]any, 0, 3*n)
		for _, r := range rows[:n] {
			args = append(args, r.platformID, r.env, r.id)
		}
		// The row-lock step sits above the sort: rows are locked in the
		// ORDER BY's order.
		query := `SELECT account_id FROM ledger_balances WHERE (platform_id, env, account_id) IN (` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ") + `) ORDER BY account_id FOR UPDATE`
		res, err := q.query(ctx, query, args...)
		if err != nil {
			return err
		}
		for res.Next() {
		}
		err = res.Err()
		if cerr := res.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return classify(err)
		}
		rows = rows[n:]
	}
	return nil
}
