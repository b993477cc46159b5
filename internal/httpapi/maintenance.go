package httpapi

import (
	"context"
	"sync"
	"time"
)

// IdempotencyRetention is how long a finished Idempotency-Key is replayed
// (R-IDEM-02 needs at least 24 hours).
const IdempotencyRetention = 48 * time.Hour

// RunMaintenance purges expired idempotency keys, signed-retry requests and
// dashboard sessions
// every few minutes until ctx ends. Every node may run it; the deletes are
// idempotent. It also keeps the
// planner's statistics fresh (store.RefreshPlannerStatistics).
func (s *Server) RunMaintenance(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.refreshStatistics(ctx) })
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		n, err := s.db.Write().PurgeIdempotencyKeys(ctx, s.db.Now().Add(-IdempotencyRetention))
		if err != nil && ctx.Err() == nil {
			s.log.Warn("purge idempotency keys", "error", err.Error())
		} else if n > 0 {
			s.log.Debug("purged idempotency keys", "count", n)
		}
		// Signed-retry requests: expired first steps and burned ones, after
		// the same retention (a purged Request-Id is then REQUEST_NOT_FOUND,
		// still refused).
		if n, err := s.db.Write().PurgeSignedRequests(ctx, s.db.Now().Add(-IdempotencyRetention), 1000); err != nil && ctx.Err() == nil {
			s.log.Warn("purge signed requests", "error", err.Error())
		} else if n > 0 {
			s.log.Debug("purged signed requests", "count", n)
		}
		if n, err := s.db.Write().DeleteExpiredDashboardSessions(ctx, s.db.Now()); err != nil && ctx.Err() == nil {
			s.log.Warn("purge dashboard sessions", "error", err.Error())
		} else if n > 0 {
			s.log.Debug("purged dashboard sessions", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refreshStatistics keeps the planner's statistics up with fast-growing
// tables (store.RefreshPlannerStatistics): checked at start (a node that was
// restarted may find tables grown since their last analysis) and every 5 s,
// it analyzes only what changed enough.
func (s *Server) refreshStatistics(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		if err := s.db.RefreshPlannerStatistics(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("refresh planner statistics", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
