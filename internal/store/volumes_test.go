package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// R-ERR-21: the daily volume is one running total per tenant and UTC day,
// and AddDailyVolume never lets the total pass the limit.
func TestDailyVolume_AddRespectsLimitPerDay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		other := store.Tenant{PlatformID: tn.PlatformID, Env: store.EnvProduction}
		day := time.Date(2026, 3, 1, 23, 59, 59, 999999000, time.UTC)
		add := func(tn store.Tenant, at time.Time, usd, limit int64) (int64, bool) {
			t.Helper()
			var used int64
			var ok bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				used, ok, err = tx.AddDailyVolume(ctx, tn, at, usd, limit)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return used, ok
		}
		if used, ok := add(tn, day, 600, 1000); !ok || used != 0 {
			t.Fatalf("first add: used %d ok %v", used, ok)
		}
		if used, ok := add(tn, day, 400, 1000); !ok || used != 600 {
			t.Fatalf("add to exactly the limit: used %d ok %v", used, ok)
		}
		if used, ok := add(tn, day, 1, 1000); ok || used != 1000 {
			t.Fatalf("over the limit: used %d ok %v", used, ok)
		}
		if used, ok := add(tn, day.Add(time.Microsecond), 1000, 1000); !ok || used != 0 {
			t.Fatalf("next UTC day starts at 0: used %d ok %v", used, ok)
		}
		if used, ok := add(other, day, 1001, 1000); ok || used != 0 {
			t.Fatalf("a first add above the limit: used %d ok %v", used, ok)
		}
		got, err := db.Read().DailyVolume(ctx, tn, day.Add(-time.Hour))
		if err != nil || got != 1000 {
			t.Fatalf("DailyVolume = %d, %v; want 1000", got, err)
		}
		if got, err := db.Read().DailyVolume(ctx, other, day); err != nil || got != 0 {
			t.Fatalf("other environment's volume = %d, %v; want 0", got, err)
		}
	})
}

// Concurrent executions cannot together pass the limit (the gap the old
// read-then-check left open).
func TestDailyVolume_ConcurrentAddsNeverPassLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		at := time.Now()
		var wg sync.WaitGroup
		var accepted atomic.Int64
		for range 40 {
			wg.Go(func() {
				err := db.InTx(ctx, func(tx *store.Tx) error {
					_, ok, err := tx.AddDailyVolume(ctx, tn, at, 7, 100)
					if ok {
						accepted.Add(1)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, err := db.Read().DailyVolume(ctx, tn, at)
		if err != nil || got != 98 || accepted.Load() != 14 {
			t.Fatalf("volume %d (%v), %d accepted; want 98 from 14", got, err, accepted.Load())
		}
	})
}
