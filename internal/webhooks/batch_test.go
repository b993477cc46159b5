package webhooks

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// emitMany queues n events for tn in one transaction.
func emitMany(t *testing.T, db *store.DB, tn store.Tenant, n int) []string {
	t.Helper()
	var ids []string
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for range n {
			env, err := events.Emit(ctx, tx, tn, "TEST", "Thing:1", map[string]any{"n": 1})
			if err != nil {
				return err
			}
			ids = append(ids, env.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// One batch holds an outcome whose lease was lost, and, for the same event,
// the outcome of the worker that took it over: the stale one is kept as an
// attempt and changes nothing; every other outcome in the batch applies.
func TestRecord_BatchWithAStaleLease(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		tn := store.Tenant{PlatformID: "Platform:a", Env: store.EnvSandbox}
		taken := emit(t, db, tn, "TEST")
		dead, err := db.ClaimDeliveries(ctx, "dead", time.Minute, 1, 10)
		if err != nil || len(dead) != 1 {
			t.Fatalf("%v %v", ids(dead), err)
		}
		a, b := emit(t, db, tn, "TEST"), emit(t, db, tn, "TEST")
		live, err := db.ClaimDeliveries(ctx, "live", time.Hour, 10, 10)
		if err != nil || len(live) != 2 {
			t.Fatalf("%v %v", ids(live), err)
		}
		c.Advance(2 * time.Minute) // the dead worker's lease is over
		next, err := db.ClaimDeliveries(ctx, "next", time.Hour, 10, 10)
		if err != nil || len(next) != 1 || next[0].EventID != taken.ID {
			t.Fatalf("%v %v", ids(next), err)
		}
		ok := outcome{At: c.Now(), URL: "http://receiver/hook", Status: 200, Latency: time.Millisecond, Excerpt: "ok"}
		busy := outcome{At: c.Now(), URL: "http://receiver/hook", Status: 503, Latency: time.Millisecond, Excerpt: "busy"}
		got, err := record(ctx, db, DefaultBackoff, []finished{
			{claim: dead[0], out: ok}, {claim: live[0], out: ok}, {claim: next[0], out: busy}, {claim: live[1], out: ok},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !got[0].lost || got[1].lost || got[2].lost || got[3].lost {
			t.Fatalf("lost: %v %v %v %v", got[0].lost, got[1].lost, got[2].lost, got[3].lost)
		}
		for _, id := range []string{a.ID, b.ID} {
			if d := delivery(t, db, tn, id); d.State != store.DeliveryDelivered || d.LeaseUntil != nil || d.DeliveredAt == nil {
				t.Fatalf("%s: %+v", id, d)
			}
			if as := attempts(t, db, tn, id); len(as) != 1 || as[0].StatusCode != 200 {
				t.Fatalf("%s: %+v", id, as)
			}
		}
		// The current owner's 503 stands, not the dead worker's 200.
		d := delivery(t, db, tn, taken.ID)
		if d.State != store.DeliveryPending || d.LeaseUntil != nil || !d.NextAttemptAt.After(c.Now()) || d.DeliveredAt != nil {
			t.Fatalf("%+v", d)
		}
		if as := attempts(t, db, tn, taken.ID); len(as) != 2 {
			t.Fatalf("both attempts are kept: %+v", as)
		}
	})
}

// Outcomes are written through the group commit: they share the transfers'
// commits instead of taking a commit (on SQLite, the one writer) of their
// own.
func TestRecord_SharesTheGroupCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		tn := store.Tenant{PlatformID: "Platform:a", Env: store.EnvSandbox}
		e := emit(t, db, tn, "TEST")
		cs, err := db.ClaimDeliveries(ctx, "w", time.Hour, 1, 10)
		if err != nil || len(cs) != 1 {
			t.Fatalf("%v %v", ids(cs), err)
		}
		before := db.BatchStats().Transactions
		ok := outcome{At: c.Now(), URL: "http://receiver/hook", Status: 200, Latency: time.Millisecond}
		if _, err := record(ctx, db, DefaultBackoff, []finished{{claim: cs[0], out: ok}}, nil); err != nil {
			t.Fatal(err)
		}
		// Both engines batch by default (store.DefaultBatchWorkers).
		if got, want := db.BatchStats().Transactions-before, int64(1); got != want {
			t.Fatalf("%d group-commit callers for one record, want %d", got, want)
		}
		if d := delivery(t, db, tn, e.ID); d.State != store.DeliveryDelivered {
			t.Fatalf("%+v", d)
		}
	})
}

// Stopping the runner writes the attempts that had finished, in one batch,
// before Run returns; until then their deliveries stay leased, and the
// per-tenant cap does not count them, since they occupy no worker.
func TestRunner_ShutdownFlushesFinishedAttempts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		rc := newReceiver(t, nil)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		want := emitMany(t, db, tn, 6)
		r := NewRunner(db, nil, testOptions()) // 4 workers, 2 per tenant
		r.rec.linger = time.Hour               // nothing is written before the stop
		stop := start(t, r)
		drive(t, nil, 0, func() bool { return len(r.rec.pending()) == len(want) })
		for _, id := range want {
			if d := delivery(t, db, tn, id); d.State != store.DeliveryPending || d.LeaseUntil == nil {
				t.Fatalf("written before the stop: %+v", d)
			}
		}
		stop()
		if n := len(rc.all()); n != len(want) {
			t.Fatalf("%d requests for %d events", n, len(want))
		}
		for _, id := range want {
			if d := delivery(t, db, tn, id); d.State != store.DeliveryDelivered || d.LeaseUntil != nil {
				t.Fatalf("not flushed: %+v", d)
			}
			if as := attempts(t, db, tn, id); len(as) != 1 || as[0].StatusCode != 200 {
				t.Fatalf("%s: %+v", id, as)
			}
		}
	})
}

// A tenant with a large backlog never gets more than its cap of leases, and
// tenants whose events sit behind that backlog are found in the same claim.
func TestClaim_PerTenantCapWithLargeBacklog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		big := store.Tenant{PlatformID: "Platform:big", Env: store.EnvSandbox}
		b := store.Tenant{PlatformID: "Platform:b", Env: store.EnvSandbox}
		small := store.Tenant{PlatformID: "Platform:c", Env: store.EnvProduction}
		bigIDs := emitMany(t, db, big, 1000)
		c.Advance(time.Millisecond)
		bIDs := emitMany(t, db, b, 3)
		c.Advance(time.Millisecond)
		smallIDs := emitMany(t, db, small, 1)
		claim := func(token string, pastCapped bool, finished ...string) store.ClaimResult {
			t.Helper()
			res, err := db.ClaimBatch(ctx, store.ClaimRequest{Token: token, Lease: time.Hour, Limit: 8, PerTenant: 2,
				PastCapped: pastCapped, Finished: finished})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}

		first := claim("w1", true)
		want := []string{bigIDs[0], bigIDs[1], bIDs[0], bIDs[1], smallIDs[0]}
		if fmt.Sprint(ids(first.Claims)) != fmt.Sprint(want) || first.Blocked {
			t.Fatalf("claimed %v (blocked %v), want %v", ids(first.Claims), first.Blocked, want)
		}
		// Every tenant with due events is at its cap or has no more.
		for _, pastCapped := range []bool{true, false} {
			if res := claim("w2", pastCapped); len(res.Claims) != 0 || !res.Blocked || !res.Waiting {
				t.Fatalf("over the cap: %v (blocked %v, waiting %v)", ids(res.Claims), res.Blocked, res.Waiting)
			}
		}
		// Leases whose attempts are over (outcome not written yet) do not
		// count: the big tenant gets two more, the next oldest.
		res := claim("w3", true, bigIDs[0], bigIDs[1])
		if fmt.Sprint(ids(res.Claims)) != fmt.Sprint([]string{bigIDs[2], bigIDs[3]}) || !res.Blocked {
			t.Fatalf("claimed %v (blocked %v)", ids(res.Claims), res.Blocked)
		}
		if err := db.Write().FinishDelivery(ctx, bIDs[0], "w1", store.DeliveryOutcome{State: store.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
		if res := claim("w4", true); fmt.Sprint(ids(res.Claims)) != fmt.Sprint([]string{bIDs[2]}) || !res.Waiting {
			t.Fatalf("after one of b finished: %v (waiting %v: big's backlog is)", ids(res.Claims), res.Waiting)
		}
	})
}

// A busy node with several tenants delivers every event exactly once, and
// records one attempt for each.
func TestDelivery_ManyEventsEachOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		rc := newReceiver(t, func(http.ResponseWriter, *http.Request) int { return http.StatusOK })
		var tenants []store.Tenant
		var want []string
		for i := range 3 {
			tn := newTenant(t, db, store.EnvSandbox, rc.URL(fmt.Sprintf("/t%d", i)))
			tenants = append(tenants, tn)
			want = append(want, emitMany(t, db, tn, 100)...)
		}
		start(t, NewRunner(db, nil, testOptions()))
		drive(t, nil, 0, func() bool {
			for i := range tenants {
				if delivery(t, db, tenants[i], want[100*i+99]).State != store.DeliveryDelivered {
					return false
				}
			}
			return len(rc.delivered()) == len(want)
		})
		if n := len(rc.all()); n != len(want) {
			t.Fatalf("%d requests for %d events", n, len(want))
		}
		for i, id := range want {
			tn := tenants[i/100]
			drive(t, nil, 0, func() bool { return delivery(t, db, tn, id).State == store.DeliveryDelivered })
			if as := attempts(t, db, tn, id); len(as) != 1 {
				t.Fatalf("%s: %d attempts", id, len(as))
			}
		}
	})
}
