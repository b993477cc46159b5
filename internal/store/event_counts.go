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
	q.counts[countKey{platformID: t.PlatformID, env: t.Env, scope: eventScopePrefix + typ}] += n
}

// eventCounted reports whether f has a counter: the tenant's events, or one
// type of them. Any other filter (resource, dates) counts rows.
func eventCounted(f EventFilter) bool {
	return f.ResourceID == "" && f.CreatedAfter == nil && f.CreatedBefore == nil
}

// countEventRows is how many events of t match f, w being f as conditions
// on events e.
func (q Q) countEventRows(ctx context.Context, t Tenant, f EventFilter, w where) (int, error) {
	cond := ""
	if f.Type != "" {
		cond = "type = ?"
	}
	return q.listTotal(ctx, eventCounted(f), "event_counts", tenantCounters(t, cond, f.Type), "events e", w)
}

// eventCountKey reports whether k counts events, and of which type.
func eventCountKey(k countKey) (typ string, ok bool) {
	return strings.CutPrefix(k.scope, eventScopePrefix)
}
