package store

import (
	"context"
	"strings"
)

// event_counts (migration 0065) keeps totalCount of GET /events O(1) when
// the list is filtered by nothing or by type alone: the tenant's events are
// kept for at least 30 days, two or more a transaction, and a COUNT(*) over
// them on every page grew with them (docs/benchmarks.md, "Twenty-seventh
// session").
//
// An event's increment rides in the database transaction's countDeltas
// (transaction_counts.go) under eventScopePrefix and its type, so a batch's
// failed fn takes its events' counts with it as it does its transactions',
// and takeCounts adds them at the commit, sharded like the 'all' scope.
const eventScopePrefix = "event:"

// countEvents adds n events of type typ of t to q's database transaction's
// counts: 1 as one is queued, -1 as one is purged.
func (q Q) countEvents(t Tenant, typ string, n int64) {
	q.counts[countKey{t.PlatformID, t.Env, eventScopePrefix + typ}] += n
}

// eventCounted reports whether f has a counter: the tenant's events, or one
// type of them. Any other filter (resource, dates) counts rows.
func eventCounted(f EventFilter) bool {
	return f.ResourceID == "" && f.CreatedAfter == nil && f.CreatedBefore == nil
}

// countEventRows is how many events of t match f, w being f as conditions
// on events e.
func (q Q) countEventRows(ctx context.Context, t Tenant, f EventFilter, w where) (int, error) {
	var total int
	// Inside a transaction that queued some, the counters lag until commit.
	if eventCounted(f) && len(q.counts) == 0 {
		cond, args := "", []any{t.PlatformID, t.Env}
		if f.Type != "" {
			cond, args = " AND type = ?", append(args, f.Type)
		}
		err := q.queryRow(ctx, `SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM event_counts
			WHERE platform_id = ? AND env = ?`+cond, args...).Scan(&total)
		return total, classify(err)
	}
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM events e`+w.sql(), w.args...).Scan(&total)
	return total, classify(err)
}

// eventCountKey reports whether k counts events, and of which type.
func eventCountKey(k countKey) (typ string, ok bool) {
	return strings.CutPrefix(k.scope, eventScopePrefix)
}
