package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// transaction_counts (migrations 0014, 0066) keeps totalCount of GET
// /transactions O(1) for the scopes below — 'all' (the tenant), 'platform'
// (the platform's own transactions, customer_id NULL) and 'customer:<id>' —
// each alone or narrowed to a transaction type, a status or both: each row
// counts one scope's transactions of one type and status.
const (
	scopeAll            = "all"
	scopePlatform       = "platform"
	customerScopePrefix = "customer:"
)

// countShards is how many rows the 'all' and 'platform' scopes are spread
// over. Every insert adds to them, so on PostgreSQL one row each would make
// concurrent transfers queue on its lock until commit; a customer's scope
// needs no shards, the ledger already serialises a customer's transfers on
// its balance row.
const countShards = 8

// countTurn picks the shard of a transaction's increments (turn.go).
var countTurn = newTurn()

// countKey is one counter: a scope of a tenant and, for transactions, one
// type (kind) and status; events' keys leave those two empty.
type countKey struct{ platformID, env, scope, kind, status string }

// countDeltas are the increments of one database transaction, applied just
// before it commits (flushAtCommit).
type countDeltas map[countKey]int64

// errUncounted refuses a transaction insert or update outside InTx or
// InBatchTx, before it writes anything: no one would add it to the counters.
var errUncounted = errors.New("store: transactions are inserted and updated inside InTx, which keeps their counts")

// countTransaction adds n transactions of t, owned by customerID ("" for
// the platform), of type typ and in status, to q's database transaction's
// counts: 1 as one is inserted; -1 from its old status and 1 to its new one
// as its status changes.
func (q Q) countTransaction(t Tenant, customerID, typ, status string, n int64) error {
	if q.counts == nil {
		return errUncounted
	}
	owner := scopePlatform
	if customerID != "" {
		owner = customerScopePrefix + customerID
	}
	q.counts[countKey{platformID: t.PlatformID, env: t.Env, scope: scopeAll, kind: typ, status: status}] += n
	q.counts[countKey{platformID: t.PlatformID, env: t.Env, scope: owner, kind: typ, status: status}] += n
	return nil
}

// run is fn followed by what the transaction defers to its end: its events
// (outbox.go) and its counts.
func (tx *Tx) run(ctx context.Context, fn func(*Tx) error) error {
	if err := fn(tx); err != nil {
		return err
	}
	return tx.flushAtCommit(ctx)
}

// The transaction's increments are added in one statement per counter
// table (transaction_counts, then event_counts), whose rows are in key
// order. Taking the counter locks last and in one global order is what
// keeps them from deadlocking on PostgreSQL: a transfer records the
// sender's transaction before the ledger locks balances and the receiver's
// after, so adding as each row is inserted would lock customer A's counter
// then B's in one transfer and B's then A's in the reverse one. It also holds
// the shared 'all' row only from here to the commit. The shard is picked once
// per database transaction, so each counter it touched (a scope, type and
// status) is one row.
//
// flushAtCommit writes the outbox (events, queued writes) and the counts,
// in one statement on PostgreSQL (execAll): the transaction's last, so the
// counter rows stay locked only from there to the commit.
func (q Q) flushAtCommit(ctx context.Context) error {
	return q.writeQueued(ctx, q.takeEvents(), q.takeWrites(), q.takeCounts()...)
}

// countRow is a counter's increment as takeCounts writes it.
type countRow struct {
	countKey
	shard int
	n     int64
}

// takeCounts empties the increments into the statements that add them:
// transaction_counts' rows, then event_counts' (event_counts.go), each in
// key order, so every database transaction takes the counter rows it
// touches in one global order. A key whose increments cancel out (a status
// changed there and back) is not written.
func (q Q) takeCounts() []statement {
	if len(q.counts) == 0 {
		return nil
	}
	shard := countTurn.next(countShards)
	var txns, evs []countRow
	for k, n := range q.counts {
		r := countRow{countKey: k, n: n}
		switch typ, ok := eventCountKey(k); {
		case n == 0:
		case ok:
			r.scope, r.shard = typ, shard
			evs = append(evs, r)
		default:
			if k.scope == scopeAll || k.scope == scopePlatform {
				r.shard = shard
			}
			txns = append(txns, r)
		}
	}
	clear(q.counts)
	var out []statement
	if len(txns) > 0 {
		out = append(out, q.addCounts("transaction_counts", []string{"scope", "transaction_type", "status"}, txns,
			func(r countRow, args []any) []any { return append(args, r.scope, r.kind, r.status) }))
	}
	if len(evs) > 0 {
		out = append(out, q.addCounts("event_counts", []string{"type"}, evs,
			func(r countRow, args []any) []any { return append(args, r.scope) }))
	}
	return out
}

// addCounts is the upsert that adds rows to table, whose primary key is the
// tenant, keys (each row's values of them appended by keyArgs) and shard. It
// sorts rows into that key's order first.
func (q Q) addCounts(table string, keys []string, rows []countRow, keyArgs func(countRow, []any) []any) statement {
	slices.SortFunc(rows, func(a, b countRow) int {
		return cmp.Or(cmp.Compare(a.platformID, b.platformID), cmp.Compare(a.env, b.env), cmp.Compare(a.scope, b.scope),
			cmp.Compare(a.kind, b.kind), cmp.Compare(a.status, b.status), cmp.Compare(a.shard, b.shard))
	})
	cols := slices.Concat([]string{"platform_id", "env"}, keys, []string{"shard", "n"})
	args := make([]any, 0, len(cols)*len(rows))
	for _, r := range rows {
		args = keyArgs(r, append(args, r.platformID, r.env))
		args = append(args, r.shard, r.n)
	}
	return q.insertRows(table, cols, len(rows), args, ` ON CONFLICT (`+strings.Join(cols[:len(cols)-1], ", ")+
		`) DO UPDATE SET n = `+table+`.n + excluded.n`)
}

// countedScope is the one place that decides which filters have a counter:
// none, CustomerID alone and PlatformOnly alone (ListTransactions has turned
// PlatformCustomerID into CustomerID by then), each optionally with a Type,
// a Status or both (countTransactions narrows the scope's rows to them).
// The order and the cursor do not change a count. Any other filter
// (accounts, card, reference, dates, or two owner filters at once) is
// counted nowhere, and ListTransactions runs COUNT(*).
func countedScope(f TransactionFilter) (scope string, ok bool) {
	rest := f
	rest.CustomerID, rest.PlatformOnly, rest.Descending, rest.Type, rest.Status = "", false, false, "", ""
	switch {
	case rest != (TransactionFilter{}):
		return "", false
	case f.CustomerID != "" && f.PlatformOnly:
		return "", false
	case f.CustomerID != "":
		return customerScopePrefix + f.CustomerID, true
	case f.PlatformOnly:
		return scopePlatform, true
	}
	return scopeAll, true
}

// countTransactions is how many transactions of t match f, w being f as
// conditions on transactions t.
func (q Q) countTransactions(ctx context.Context, t Tenant, f TransactionFilter, w where) (int, error) {
	scope, counted := countedScope(f)
	counters := tenantCounters(t, "scope = ?", scope)
	if f.Type != "" {
		counters.add("transaction_type = ?", f.Type)
	}
	if f.Status != "" {
		counters.add("status = ?", f.Status)
	}
	return q.listTotal(ctx, counted, "transaction_counts", counters, "transactions t", w)
}

// tenantCounters selects t's rows of a counter table, with cond (and its
// args) too when cond is not empty.
func tenantCounters(t Tenant, cond string, args ...any) where {
	c := where{}
	c.add("platform_id = ?", t.PlatformID)
	c.add("env = ?", t.Env)
	if cond != "" {
		c.add(cond, args...)
	}
	return c
}

// listTotal is a list's totalCount: the sum of the counter rows of table
// that counters selects when the list is counted, else COUNT(*) over from
// (a table and its alias) under w. Inside a transaction that has counts
// pending, the counters lag until its commit, so it counts rows.
func (q Q) listTotal(ctx context.Context, counted bool, table string, counters where, from string, w where) (int, error) {
	var total int
	if counted && len(q.counts) == 0 {
		err := q.queryRow(ctx, `SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM `+table+counters.sql(), counters.args...).Scan(&total)
		return total, classify(err)
	}
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM `+from+w.sql(), w.args...).Scan(&total)
	return total, classify(err)
}

// RebuildCounts recomputes transaction_counts from the transactions table
// and event_counts from the events table, for tools that write those with
// SQL of their own (paymentsbench seed). It replays the backfills of
// migrations 0066 and 0065, so the two cannot drift. On PostgreSQL it holds
// off inserts into both tables until it commits, so it is exact with
// servers running too.
func (db *DB) RebuildCounts(ctx context.Context) error {
	var backfill []string
	for _, m := range []struct{ file, table, counted string }{
		{"0066_transaction_counts_by_kind.sql", "transaction_counts", "transactions"},
		{"0065_event_counts.sql", "event_counts", "events"},
	} {
		body, err := migrationFS.ReadFile("migrations/" + m.file)
		if err != nil {
			return err
		}
		if db.engine == Postgres {
			backfill = append(backfill, "LOCK TABLE "+m.counted+" IN SHARE MODE")
		}
		backfill = append(backfill, "DELETE FROM "+m.table)
		n := len(backfill)
		for _, s := range statements(string(body)) {
			if strings.HasPrefix(s, "INSERT INTO "+m.table) {
				backfill = append(backfill, s)
			}
		}
		if len(backfill) == n {
			return fmt.Errorf("store: migration %s has no backfill", m.file)
		}
	}
	return db.InTx(ctx, func(tx *Tx) error {
		for _, s := range backfill {
			if _, err := tx.exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
