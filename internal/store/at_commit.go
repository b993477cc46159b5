package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Ledger writes and daily-volume adds at the commit. Inside a batch, a fn
// whose balance changes were decided from the rows the batch locked
// (PostgreSQL) or read (SQLite) when it began (balance_cache.go) does not write
// its ledger rows at once: WriteLedger queues them, with the changes, like
// the other queued writes (outbox.go), and applies the changes to the
// batch's copy of the rows. A fn's daily-volume add to a shard row the batch
// already holds (it added to it before, volumeCache) is queued the same way.
// At the commit, or before any statement that may touch their tables
// (flushFor), the batch writes them all: its transfers and postings as
// multi-row inserts, each statement bucket once with the sum of its
// postings, and each balance and volume row once with the sum of its
// deltas. So a batched transfer sends no ledger or volume statement of its
// own.
//
// The sums are written by versioned updates: a balance row only if its
// version is still the one the first queued change was decided on (and, for
// an INTERNAL account, its available balance stays non-negative), a volume
// row only if it still holds what the first queued add saw. The rows are the
// batch's (locked), so they always are; were one not, the statement reports
// fewer rows than it should (execAll) and the batch does not commit:
// every fn runs again alone, where nothing is queued. A queued write can
// fail its batch but never move money or volume wrongly.

// queuedLedger is one WriteLedger call queued in a batch.
type queuedLedger struct {
	tenant             Tenant
	transfers          []LedgerTransfer
	postings, bucketed []LedgerPosting
	changes            []LedgerBalanceChange
	at                 int64 // microseconds
}

// queuedVolume is one daily-volume add queued in a batch: usd more on a
// shard row that held before.
type queuedVolume struct {
	key         volumeShardKey
	before, usd int64
}

// ledgerTables are the tables a queued ledger write goes to; volumeTables
// a queued volume add's. Statements naming them (or a table referring to
// them, referencing) write the queue first.
var (
	ledgerTables = []string{"ledger_transfers", "ledger_postings", "ledger_posting_buckets", "ledger_balances"}
	volumeTables = []string{"daily_volumes"}
)

// errQueuedDeltaMissed: a summed update found a row other than the batch
// left it. The batch does not commit; its fns run again alone.
var errQueuedDeltaMissed = errors.New("store: a queued balance or volume change found its row changed")

// queuedLedgerLimit bounds what one WriteLedger may queue; bigger ledger
// batches (bulk work) are written at once.
const queuedLedgerLimit = 64

// queueLedger queues a WriteLedger call inside a batch (not a request
// running alone after a failed commit) when the batch's cache holds every
// changed row at the version the change was decided on, and reports
// whether it did.
func (q Q) queueLedger(t Tenant, ts []LedgerTransfer, ps, bucketed []LedgerPosting, changes []LedgerBalanceChange, at int64) bool {
	cache := q.balances()
	if cache == nil || !q.outbox.shared || len(changes) == 0 ||
		len(changes) > queuedLedgerLimit || len(ts) > queuedLedgerLimit || len(ps) > 4*queuedLedgerLimit {
		return false
	}
	if !cache.holds(t, changes) {
		return false
	}
	q.outbox.writes = append(q.outbox.writes, statement{ledger: &queuedLedger{tenant: t, transfers: ts, postings: ps,
		bucketed: bucketed, changes: changes, at: at}})
	cache.applied(t, changes, at)
	return true
}

// tables are the tables st writes to; nil when not known.
func (st statement) tables() []string {
	switch {
	case len(st.touch) > 0:
		return st.touch
	case st.ledger != nil:
		return ledgerTables
	case st.volume != nil:
		return volumeTables
	}
	if table, ok := insertTable(st.sql); ok {
		return []string{table}
	}
	return nil
}

// writeQueued writes the queued finishes, head, then the other queued
// writes, then tail: the ledger rows first (transactions rows refer to
// transfers), the inserts merged per shape, and the summed balance and
// volume updates checked (execAll). The batch's caches already hold what
// the updates write, so the flush leaves them alone.
func (q Q) writeQueued(ctx context.Context, head, writes []statement, tail ...statement) error {
	var plain, scanned []statement
	var ledger []*queuedLedger
	var volume []*queuedVolume
	for _, w := range writes {
		switch {
		case w.scan != nil:
			scanned = append(scanned, w)
		case w.ledger != nil:
			ledger = append(ledger, w.ledger)
		case w.volume != nil:
			volume = append(volume, w.volume)
		default:
			plain = append(plain, w)
		}
	}
	// Queued finishes (statements with a scan, each sent on its own) go
	// first, so the rest stay one statement: they update older rows than
	// the others insert.
	stmts := append(append(scanned, head...), q.ledgerInsertsOf(ledger)...)
	stmts = append(append(stmts, q.mergeInserts(plain)...), tail...)
	updates, err := ledgerDeltaUpdates(q.engine, ledger)
	if err == nil {
		var vs []statement
		vs, err = volumeDeltaUpdates(q.engine, volume)
		updates = append(updates, vs...)
	}
	if err != nil {
		return err
	}
	if len(updates) == 0 {
		return q.execAll(ctx, stmts)
	}
	if q.outbox != nil {
		was := q.outbox.flushing
		q.outbox.flushing = true
		defer func() { q.outbox.flushing = was }()
	}
	if err := q.execAll(ctx, append(stmts, updates...)); err != nil {
		q.balances().clear()
		q.volumes().clear()
		return ledgerConflict(err)
	}
	return nil
}

// ledgerInsertsOf are the transfers, postings and statement buckets of
// queued ledger writes: one multi-row insert per table, each bucket once.
func (q Q) ledgerInsertsOf(ls []*queuedLedger) []statement {
	if len(ls) == 0 {
		return nil
	}
	var ts []LedgerTransfer
	var ps, bucketed []LedgerPosting
	for _, l := range ls {
		ts = append(ts, l.transfers...)
		ps = append(ps, l.postings...)
		bucketed = append(bucketed, l.bucketed...)
	}
	out := append(q.ledgerTransferInserts(ts), q.ledgerPostingInserts(ps)...)
	return append(out, q.ledgerBucketUpserts(bucketed)...)
}

// balanceSum is the summed change of one balance row.
type balanceSum struct {
	key                     balanceKey
	version, n              int64
	posted, debits, credits int64
	floor                   bool
	at                      int64
}

// ledgerDeltaUpdates sums queued balance changes per row, in the order they
// were decided (each must follow the one before: the next version), into
// versioned updates in account order.
func ledgerDeltaUpdates(engine Engine, ls []*queuedLedger) ([]statement, error) {
	sums := map[balanceKey]*balanceSum{}
	for _, l := range ls {
		for _, c := range l.changes {
			k := balanceKey{l.tenant, c.AccountID}
			s, ok := sums[k]
			if !ok {
				s = &balanceSum{key: k, version: c.Version}
				sums[k] = s
			}
			if c.Version != s.version+s.n {
				return nil, fmt.Errorf("%w: %s queued at version %d after %d", errQueuedDeltaMissed, c.AccountID, c.Version, s.version+s.n)
			}
			if !addTo(&s.posted, c.Posted) || !addTo(&s.debits, c.PendingDebits) || !addTo(&s.credits, c.PendingCredits) {
				return nil, fmt.Errorf("%w: %s: the batch's sum overflows", errQueuedDeltaMissed, c.AccountID)
			}
			s.n++
			s.floor = s.floor || c.FloorZero
			s.at = max(s.at, l.at)
		}
	}
	rows := make([]*balanceSum, 0, len(sums))
	for _, s := range sums {
		rows = append(rows, s)
	}
	slices.SortFunc(rows, func(a, b *balanceSum) int { return strings.Compare(a.key.id, b.key.id) })
	var out []statement
	for len(rows) > 0 {
		n := min(len(rows), 1000)
		st := balanceSumUpdate(engine, rows[:n])
		st.want = n
		out = append(out, st)
		rows = rows[n:]
	}
	return out, nil
}

// balanceSumUpdate adds each sum to its balance row if the row is at the
// sum's first version (and an INTERNAL account's available balance stays
// non-negative), returning the account of each row it changed. WriteLedger
// writes its changes with it too, each a sum of one.
func balanceSumUpdate(engine Engine, rows []*balanceSum) statement {
	args := make([]any, 0, 10*len(rows))
	for _, s := range rows {
		args = append(args, s.key.tenant.PlatformID, s.key.tenant.Env, s.key.id, s.version, s.n, s.posted, s.debits,
			s.credits, s.at, s.floor)
	}
	update := `UPDATE ledger_balances AS b SET posted = b.posted + v.posted,
		pending_debits = b.pending_debits + v.debits, pending_credits = b.pending_credits + v.credits,
		version = b.version + v.n, updated_at = v.at
		FROM %s
		WHERE b.account_id = v.account_id AND b.platform_id = v.platform_id AND b.env = v.env AND b.version = v.version
		AND (NOT v.floor_zero OR b.posted - b.pending_debits + v.posted - v.debits >= 0)
		RETURNING %s`
	const cols = `platform_id, env, account_id, version, n, posted, debits, credits, at, floor_zero`
	types := []string{"text", "text", "text", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "boolean"}
	if engine != Postgres {
		// SQLite names a VALUES list's columns only in a common table
		// expression, and its RETURNING sees the updated table alone,
		// unqualified. (PostgreSQL keeps the derived table: its batch sends
		// this statement as one WITH query of a combined statement.)
		return statement{sql: `WITH v (` + cols + `) AS (VALUES ` + castRows(types, len(rows)) + `) ` +
			fmt.Sprintf(update, "v", "account_id"), args: args}
	}
	from, args := fromRows(engine, types, len(rows), args)
	return statement{sql: fmt.Sprintf(update, from+` AS v (`+cols+`)`, "b.account_id"), args: args}
}

// addTo adds d to *sum, reporting false (and changing nothing) on an
// overflow.
func addTo(sum *int64, d int64) bool {
	if (d > 0 && *sum > math.MaxInt64-d) || (d < 0 && *sum < math.MinInt64-d) {
		return false
	}
	*sum += d
	return true
}

// volumeSum is the summed adds to one volume shard row.
type volumeSum struct {
	key         volumeShardKey
	before, usd int64
}

// volumeDeltaUpdates sums queued volume adds per shard row (each must start
// where the one before ended) into checked updates.
func volumeDeltaUpdates(engine Engine, vs []*queuedVolume) ([]statement, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	sums := map[volumeShardKey]*volumeSum{}
	var rows []*volumeSum
	for _, v := range vs {
		s, ok := sums[v.key]
		if !ok {
			s = &volumeSum{key: v.key, before: v.before}
			sums[v.key] = s
			rows = append(rows, s)
		}
		if v.before != s.before+s.usd {
			return nil, fmt.Errorf("%w: daily volume shard %d queued after %d, not %d", errQueuedDeltaMissed, v.key.shard,
				v.before, s.before+s.usd)
		}
		s.usd += v.usd // each add fits the shard's share: no overflow
	}
	args := make([]any, 0, 6*len(rows))
	for _, s := range rows {
		args = append(args, s.key.platformID, s.key.env, s.key.day, s.key.shard, s.before, s.usd)
	}
	from, args := fromRows(engine, []string{"text", "text", "bigint", "integer", "bigint", "bigint"}, len(rows), args)
	return []statement{{sql: `UPDATE daily_volumes AS d SET usd = d.usd + v.add
		FROM ` + from + ` AS v (platform_id, env, day, shard, before, add)
		WHERE d.platform_id = v.platform_id AND d.env = v.env AND d.day = v.day AND d.shard = v.shard AND d.usd = v.before
		RETURNING 1`, args: args, want: len(rows)}}, nil
}
