package store_test

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// eventRow is an event of tn of type typ about resource.
func eventRow(tn store.Tenant, typ, resource string, at time.Time) store.Event {
	return store.Event{ID: id.New(id.Event), Tenant: tn, Type: typ, ResourceID: resource,
		Envelope: []byte(`{"type":"` + typ + `"}`), CreatedAt: at}
}

// checkEventCounters fails unless every tenant's and type's counter equals
// its true count.
func checkEventCounters(t *testing.T, db *store.DB) map[string]int64 {
	t.Helper()
	got, want, err := db.EventCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("event counters %v, true counts %v", got, want)
	}
	return got
}

// listAllEvents pages through f's events and checks totalCount on every page
// against the events listed in all.
func listAllEvents(t *testing.T, db *store.DB, tn store.Tenant, f store.EventFilter) int {
	t.Helper()
	return pageTotals(t, fmt.Sprintf("events, filter %+v", f), func(after string) (int, string, int, error) {
		page, total, err := db.Read().ListEvents(ctx, tn, f, after, 3)
		if err != nil || len(page) == 0 {
			return 0, "", total, err
		}
		return len(page), page[len(page)-1].Event.ID, total, nil
	})
}

// queueEvents queues events of tn, two types, through group commits in which
// every third fn fails after queueing its event: its savepoint takes the
// event and its count with it.
func queueEvents(t *testing.T, db *store.DB, tn store.Tenant, n int) (kept int) {
	t.Helper()
	boom := errors.New("boom")
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			typ := "OUTGOING_PAYMENT.COMPLETED"
			if i%2 == 1 {
				typ = "INCOMING_PAYMENT.COMPLETED"
			}
			err := db.InBatchTx(ctx, func(tx *store.Tx) error {
				if err := tx.QueueEvent(eventRow(tn, typ, "Transaction:"+string(rune('a'+i%5)), time.Now())); err != nil {
					return err
				}
				if i%3 == 2 {
					return boom
				}
				return nil
			})
			switch {
			case err == nil:
				mu.Lock()
				kept++
				mu.Unlock()
			case !errors.Is(err, boom):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	return kept
}

// totalCount of GET /events comes from event_counts when the list is
// filtered by nothing or by type alone, and from the rows otherwise; it is
// exact on every page either way, per tenant, through group commits whose
// failed fns leave no count behind.
func TestEventCounts_ListTotals(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 2}, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		kept := queueEvents(t, db, sbx, 30)
		queueEvents(t, db, prd, 6)
		checkEventCounters(t, db)

		if got := listAllEvents(t, db, sbx, store.EventFilter{}); got != kept {
			t.Fatalf("listed %d events, %d committed", got, kept)
		}
		out := listAllEvents(t, db, sbx, store.EventFilter{Type: "OUTGOING_PAYMENT.COMPLETED"})
		in := listAllEvents(t, db, sbx, store.EventFilter{Type: "INCOMING_PAYMENT.COMPLETED"})
		if out+in != kept || out == 0 || in == 0 {
			t.Fatalf("by type %d + %d, %d in all", out, in, kept)
		}
		if got := listAllEvents(t, db, sbx, store.EventFilter{Type: "CARD.STATUS_CHANGE"}); got != 0 {
			t.Fatalf("a type never emitted lists %d", got)
		}
		listAllEvents(t, db, sbx, store.EventFilter{ResourceID: "Transaction:a"})
		hourAgo := time.Now().Add(-time.Hour)
		if got := listAllEvents(t, db, sbx, store.EventFilter{CreatedAfter: &hourAgo}); got != kept {
			t.Fatalf("created in the last hour: %d, %d in all", got, kept)
		}
	})
}

// Purging events takes them off the counters, by the rows each purge
// deleted: purges racing on the same events (two nodes) leave the counters
// exact. The migration's backfill and RebuildCounts, which replays it, equal
// what was counted one by one.
func TestEventCounts_PurgeBackfillAndRebuild(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, true).ID, Env: store.EnvSandbox}
		kept := queueEvents(t, db, tn, 40)
		if err := db.ExecRaw(ctx, `UPDATE webhook_deliveries SET state = 'DELIVERED'`); err != nil {
			t.Fatal(err)
		}
		incremental := checkEventCounters(t, db)

		// Migration 0065 run on a database that already holds events.
		for _, q := range []string{"DROP TABLE event_counts", "DELETE FROM schema_migrations WHERE version = 65"} {
			if err := db.ExecRaw(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if got := checkEventCounters(t, db); !maps.Equal(got, incremental) {
			t.Fatalf("backfill %v, incremental %v", got, incremental)
		}
		if err := db.ExecRaw(ctx, `UPDATE event_counts SET n = n + 5`); err != nil {
			t.Fatal(err)
		}
		if err := db.RebuildCounts(ctx); err != nil {
			t.Fatal(err)
		}
		if got := checkEventCounters(t, db); !maps.Equal(got, incremental) {
			t.Fatalf("rebuilt %v, incremental %v", got, incremental)
		}

		cutoff := time.Now().Add(time.Minute)
		var purged [2]int64
		var wg sync.WaitGroup
		for w := range purged {
			wg.Go(func() {
				for {
					n, err := db.PurgeEvents(ctx, cutoff, 3)
					if err != nil {
						t.Error(err)
						return
					}
					purged[w] += n
					if n == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		for { // a purge that found its events taken by the other stopped early
			n, err := db.PurgeEvents(ctx, cutoff, 3)
			if err != nil {
				t.Fatal(err)
			}
			if purged[0] += n; n == 0 {
				break
			}
		}
		if got := purged[0] + purged[1]; got != int64(kept) {
			t.Fatalf("purged %d events, %d were kept", got, kept)
		}
		if got := checkEventCounters(t, db); len(got) != 0 {
			t.Fatalf("after the purge: counters %v", got)
		}
		if got := listAllEvents(t, db, tn, store.EventFilter{}); got != 0 {
			t.Fatalf("after the purge %d events listed", got)
		}
	})
}
