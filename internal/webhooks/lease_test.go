package webhooks

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Many claimers at once (as several nodes would) never hold the same
// delivery, and together they get every due one.
func TestClaim_TwoWorkersNeverShare(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		const n = 60
		want := map[string]bool{}
		for i := range n {
			tn := store.Tenant{PlatformID: fmt.Sprintf("Platform:%d", i%5), Env: store.EnvSandbox}
			want[emit(t, db, tn, "TEST").ID] = true
		}
		var mu sync.Mutex
		owner := map[string]string{}
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Go(func() {
				for range 20 {
					token := fmt.Sprintf("worker-%d", w)
					claims, err := db.ClaimDeliveries(ctx, token, time.Hour, 3, 100)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, c := range claims {
						if prev, taken := owner[c.EventID]; taken {
							t.Errorf("%s claimed by %s and %s", c.EventID, prev, token)
						}
						owner[c.EventID] = token
						if c.LeaseToken != token || c.Attempts != 1 || string(c.Event.Envelope) == "" {
							t.Errorf("claim %+v", c)
						}
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(owner) != n {
			t.Fatalf("%d of %d deliveries claimed", len(owner), n)
		}
		for id := range owner {
			if !want[id] {
				t.Fatalf("claimed unknown %s", id)
			}
		}
	})
}

// A lease that expired (its worker died) is taken over; the dead worker can
// no longer record its outcome.
func TestClaim_ExpiredLeaseTakenOver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		tn := store.Tenant{PlatformID: "Platform:a", Env: store.EnvSandbox}
		ev := emit(t, db, tn, "TEST")
		first, err := db.ClaimDeliveries(ctx, "dead", time.Minute, 10, 10)
		if err != nil || len(first) != 1 {
			t.Fatalf("%v %v", first, err)
		}
		c.Advance(59 * time.Second)
		if again, _ := db.ClaimDeliveries(ctx, "other", time.Minute, 10, 10); len(again) != 0 {
			t.Fatal("a live lease was taken")
		}
		c.Advance(2 * time.Second)
		second, err := db.ClaimDeliveries(ctx, "other", time.Minute, 10, 10)
		if err != nil || len(second) != 1 || second[0].EventID != ev.ID || second[0].Attempts != 2 {
			t.Fatalf("expired lease not taken over: %+v %v", second, err)
		}
		err = db.Write().FinishDelivery(ctx, ev.ID, "dead", store.DeliveryOutcome{State: store.DeliveryDelivered})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the dead worker's late outcome must be refused: %v", err)
		}
		if err := db.Write().FinishDelivery(ctx, ev.ID, "other", store.DeliveryOutcome{State: store.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
		if d := delivery(t, db, tn, ev.ID); d.State != store.DeliveryDelivered || d.LeaseUntil != nil {
			t.Fatalf("%+v", d)
		}
	})
}

// One tenant never holds more than perTenant leases, so its backlog leaves
// room for the others; deliveries come oldest first.
func TestClaim_PerTenantCapAndOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		busy := store.Tenant{PlatformID: "Platform:busy", Env: store.EnvSandbox}
		quiet := store.Tenant{PlatformID: "Platform:quiet", Env: store.EnvSandbox}
		var busyIDs []string
		for range 10 {
			busyIDs = append(busyIDs, emit(t, db, busy, "TEST").ID)
			c.Advance(time.Millisecond)
		}
		quietID := emit(t, db, quiet, "TEST").ID
		got, err := db.ClaimDeliveries(ctx, "w1", time.Hour, 5, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].EventID != busyIDs[0] || got[1].EventID != busyIDs[1] || got[2].EventID != quietID {
			t.Fatalf("claimed %v", ids(got))
		}
		// The busy tenant is at its cap until a lease ends.
		if more, _ := db.ClaimDeliveries(ctx, "w2", time.Hour, 5, 2); len(more) != 0 {
			t.Fatalf("over the cap: %v", ids(more))
		}
		if err := db.Write().FinishDelivery(ctx, busyIDs[0], "w1", store.DeliveryOutcome{State: store.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
		if more, _ := db.ClaimDeliveries(ctx, "w2", time.Hour, 5, 2); len(more) != 1 || more[0].EventID != busyIDs[2] {
			t.Fatalf("after one finished: %v", ids(more))
		}
	})
}

func ids(cs []store.Claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.EventID)
	}
	return out
}
