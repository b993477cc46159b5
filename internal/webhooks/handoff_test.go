package webhooks

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// An event committed while the runner runs is delivered at once, without
// waiting for the next look at the queue: the poll interval here is an hour.
func TestHandoff_DeliversWithoutWaitingForAPoll(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rc := newReceiver(t, nil)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		opts := testOptions()
		opts.PollInterval = time.Hour
		start(t, NewRunner(db, nil, opts))
		time.Sleep(50 * time.Millisecond) // the start-up look is over
		ids := map[string]bool{}
		for range 5 {
			ids[emit(t, db, tn, "TEST").ID] = true
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(rc.delivered()) < len(ids) {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d delivered in 10s with no poll", len(rc.delivered()), len(ids))
			}
			time.Sleep(time.Millisecond)
		}
		for id := range ids {
			if !rc.delivered()[id] {
				t.Fatalf("%s not delivered", id)
			}
			drive(t, nil, 0, func() bool { return delivery(t, db, tn, id).State == store.DeliveryDelivered })
			if d := delivery(t, db, tn, id); d.Attempts != 1 {
				t.Fatalf("%s: %d attempts recorded, want 1", id, d.Attempts)
			}
		}
		if got := len(rc.all()); got != len(ids) {
			t.Fatalf("%d requests for %d events", got, len(ids))
		}
	})
}

// More events than a tenant's handoff queue holds: the rest wait in the
// database and are claimed as workers free up, still no poll needed. The
// tenant never has more than its cap in flight, and every event is sent
// once.
func TestHandoff_OverflowIsClaimedWithinTheCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rc, release, _, most := gatedReceiver(t)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		opts := testOptions() // 4 workers, 2 per tenant: a queue of 8
		opts.PollInterval = time.Hour
		start(t, NewRunner(db, nil, opts))
		time.Sleep(50 * time.Millisecond)
		const n = 30
		for range n {
			emit(t, db, tn, "TEST")
		}
		release()
		drive(t, nil, 0, func() bool { return len(rc.delivered()) == n })
		if got := len(rc.all()); got != n {
			t.Fatalf("%d requests for %d events", got, n)
		}
		if m := most.Load(); m > int32(opts.Workers/2) {
			t.Fatalf("%d attempts of one tenant at once; the cap is %d", m, opts.Workers/2)
		}
	})
}

// gatedReceiver answers 200 once release is called; inFlight counts the
// requests it holds, most the largest number at once. release also runs at
// the test's end, before the receiver's own cleanup (last in, first out), so
// a failing check does not leave its requests hanging.
func gatedReceiver(t *testing.T) (rc *receiver, release func(), inFlight, most *atomic.Int32) {
	gate := make(chan struct{})
	inFlight, most = new(atomic.Int32), new(atomic.Int32)
	rc = newReceiver(t, func(http.ResponseWriter, *http.Request) int {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-gate
		inFlight.Add(-1)
		return http.StatusOK
	})
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	return rc, release, inFlight, most
}

func claimOf(t store.Tenant, id string) store.Claim {
	return store.Claim{Delivery: store.Delivery{EventID: id, Tenant: t}}
}

// The handoff's bookkeeping: reservations bounded per tenant, tenants
// served in turn within their cap, overflow (claims fill the queue) until a
// claim finds the database's queue empty, hand-overs meanwhile as far as
// the queue has room, nothing handed over after the runner stopped.
func TestWorkers_HandoffBookkeeping(t *testing.T) {
	a := store.Tenant{PlatformID: "Platform:a", Env: store.EnvSandbox}
	b := store.Tenant{PlatformID: "Platform:b", Env: store.EnvSandbox}
	w := newWorkers(3, 2) // queue of 8 per tenant
	if w.reserve(a) {
		t.Fatal("reserved before the runner opened")
	}
	w.setOpen(true)
	if !w.backlogged() {
		t.Fatal("before its first look at the database's queue a runner must claim (there may be a backlog)")
	}
	if !w.reserve(a) {
		t.Fatal("a hand-over refused while a backlog may wait")
	}
	w.released([]store.Claim{claimOf(a, "first")})
	w.claimed(nil, w.takeFree(), true) // the first look found the queue empty
	if w.backlogged() {
		t.Fatal("still claiming after a look found the queue empty")
	}
	for i := range handoffQueueFactor * 2 {
		if !w.reserve(a) {
			t.Fatalf("reservation %d refused", i)
		}
	}
	if w.reserve(a) || !w.backlogged() {
		t.Fatal("a ninth reservation for one tenant was accepted")
	}
	if w.reserve(a) {
		t.Fatal("a tenant whose queue is full got a handoff")
	}
	if !w.reserve(b) {
		t.Fatal("another tenant was refused")
	}
	var as []store.Claim
	for i := range 8 {
		as = append(as, claimOf(a, string(rune('a'+i))))
	}
	w.released(as[6:])
	w.handed(as[:6])
	w.handed([]store.Claim{claimOf(b, "B")})
	// Three workers, two per tenant: a, b, a; then a is at its cap.
	var got []string
	for {
		c, ok := w.next()
		if !ok {
			break
		}
		got = append(got, c.EventID)
	}
	if len(got) != 3 || got[0] != "a" || got[1] != "B" || got[2] != "b" {
		t.Fatalf("started %v, want [a B b]", got)
	}
	w.done(claimOf(a, "a"))
	w.done(claimOf(a, "a"))
	if c, ok := w.next(); !ok || c.EventID != "c" {
		t.Fatalf("next %v %v, want c", c, ok)
	}
	if n := w.takeFree(); n != 1 {
		t.Fatalf("%d free workers for a claim, want 1", n)
	}
	w.claimed(nil, 1, false)
	if !w.backlogged() {
		t.Fatal("overflow ended by a claim that did not drain the queue")
	}
	if !w.reserve(a) {
		t.Fatal("a tenant in overflow whose queue has room again was refused a hand-over")
	}
	w.released([]store.Claim{claimOf(a, "x")})
	w.claimed(nil, w.takeFree(), true)
	if w.backlogged() || !w.reserve(a) {
		t.Fatal("overflow did not end with a drained queue")
	}
	w.setOpen(false)
	w.handed([]store.Claim{claimOf(a, "late")})
	for {
		c, ok := w.next()
		if !ok {
			break
		}
		if c.EventID == "late" || c.EventID == "d" {
			t.Fatalf("%s started after the runner stopped", c.EventID)
		}
	}
}

// A short queue whose one tenant is at its cap is not "blocked" (nothing
// lies behind it to look past) but is waiting: a runner must claim again
// when a worker frees, or those deliveries would wait for the next poll.
func TestClaim_WaitingWhenTheCapHoldsAShortQueue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		tn := store.Tenant{PlatformID: "Platform:only", Env: store.EnvSandbox}
		eventIDs := emitMany(t, db, tn, 3)
		claim := func(token string) store.ClaimResult {
			t.Helper()
			res, err := db.ClaimBatch(ctx, store.ClaimRequest{Token: token, Lease: time.Hour, Limit: 8, PerTenant: 2})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := claim("w1"); len(res.Claims) != 2 || res.Blocked || !res.Waiting {
			t.Fatalf("first: %v (blocked %v, waiting %v)", ids(res.Claims), res.Blocked, res.Waiting)
		}
		if res := claim("w2"); len(res.Claims) != 0 || res.Blocked || !res.Waiting {
			t.Fatalf("at the cap: %v (blocked %v, waiting %v)", ids(res.Claims), res.Blocked, res.Waiting)
		}
		for _, id := range eventIDs[:2] {
			if err := db.Write().FinishDelivery(ctx, id, "w1", store.DeliveryOutcome{State: store.DeliveryDelivered}); err != nil {
				t.Fatal(err)
			}
		}
		if res := claim("w3"); len(res.Claims) != 1 || res.Claims[0].EventID != eventIDs[2] || res.Waiting {
			t.Fatalf("after both finished: %v (waiting %v)", ids(res.Claims), res.Waiting)
		}
		if res := claim("w4"); len(res.Claims) != 0 || res.Waiting {
			t.Fatalf("empty queue: %v (waiting %v)", ids(res.Claims), res.Waiting)
		}
	})
}

// Once the runner has stopped, events wait in the database, unleased, for a
// claim by whichever node runs next.
func TestHandoff_StopsWithTheRunner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rc := newReceiver(t, nil)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		stop := start(t, NewRunner(db, nil, testOptions()))
		stop()
		e := emit(t, db, tn, "TEST")
		if d := delivery(t, db, tn, e.ID); d.LeaseUntil != nil || d.LeaseToken != "" || d.Attempts != 0 {
			t.Fatalf("handed over to a stopped runner: %+v", d)
		}
		start(t, NewRunner(db, nil, testOptions()))
		drive(t, nil, 0, func() bool { return rc.delivered()[e.ID] })
	})
}

// A runner that stops gives back the hand-overs it had not started, so they
// need not wait out their leases; the attempt in flight keeps its lease, as
// after a crash.
func TestHandoff_StopReleasesWhatDidNotStart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		gate := make(chan struct{})
		var got atomic.Int32
		rc := newReceiver(t, func(_ http.ResponseWriter, r *http.Request) int {
			got.Add(1)
			select {
			case <-gate:
			case <-r.Context().Done():
			}
			return http.StatusOK
		})
		t.Cleanup(func() { close(gate) }) // before the receiver closes
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		opts := testOptions()
		opts.Workers, opts.PollInterval = 2, time.Hour // one at a time for the tenant, a queue of 4
		stop := start(t, NewRunner(db, nil, opts))
		time.Sleep(50 * time.Millisecond)
		var ids []string
		for range 4 {
			ids = append(ids, emit(t, db, tn, "TEST").ID)
		}
		drive(t, nil, 0, func() bool { return got.Load() == 1 })
		stop()
		leased := 0
		for _, id := range ids {
			d := delivery(t, db, tn, id)
			switch {
			case d.LeaseUntil != nil && d.Attempts == 1:
				leased++
			case d.LeaseUntil == nil && d.Attempts == 0 && d.State == store.DeliveryPending:
			default:
				t.Fatalf("%s: %+v", id, d)
			}
		}
		if leased != 1 {
			t.Fatalf("%d deliveries still leased after the stop, want the one in flight", leased)
		}
	})
}

// A runner with a node identity takes back, as it starts, the leases its
// crashed predecessor held, instead of waiting for them to expire; a runner
// of another identity leaves them.
func TestRunner_RestartTakesBackItsPredecessorsLeases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rc := newReceiver(t, nil)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		e := emit(t, db, tn, "TEST")
		// The predecessor claimed it and died.
		if cs, err := db.ClaimDeliveries(ctx, "node-1|dead", time.Hour, 10, 10); err != nil || len(cs) != 1 {
			t.Fatalf("%v %v", ids(cs), err)
		}
		opts := testOptions()
		opts.PollInterval = time.Hour
		opts.NodeID = "node-2"
		stop := start(t, NewRunner(db, nil, opts))
		time.Sleep(100 * time.Millisecond)
		stop()
		if len(rc.all()) != 0 || delivery(t, db, tn, e.ID).LeaseToken != "node-1|dead" {
			t.Fatal("another node's lease was taken back")
		}
		opts.NodeID = "node-1"
		start(t, NewRunner(db, nil, opts))
		drive(t, nil, 0, func() bool { return rc.delivered()[e.ID] })
		d := delivery(t, db, tn, e.ID)
		drive(t, nil, 0, func() bool { d = delivery(t, db, tn, e.ID); return d.State == store.DeliveryDelivered })
		if d.Attempts != 2 {
			t.Fatalf("attempts %d, want 2 (the predecessor's counts: it may have sent it)", d.Attempts)
		}
	})
}

// A runner that starts on a backlog (left by a crashed or stopped node)
// works through it by claims and meanwhile takes hand-overs wherever a
// tenant's queue has room: another tenant's event committed while the
// backlog waits is leased to this node at its commit, not queued behind the
// backlog, and every event goes out once.
func TestHandoff_HandOversDuringABacklogAfterAStart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rcA, release, inFlight, most := gatedReceiver(t)
		// B's receiver holds its request too, so that the hand-over is still
		// leased when the test looks: a delivery already finished has no
		// lease either (on a slow machine it could finish first).
		rcB, releaseB, _, _ := gatedReceiver(t)
		a := newTenant(t, db, store.EnvSandbox, rcA.URL("/hook"))
		b := newTenant(t, db, store.EnvSandbox, rcB.URL("/hook"))
		var backlog []string
		for range 40 {
			backlog = append(backlog, emit(t, db, a, "TEST").ID)
		}
		opts := testOptions() // 4 workers, 2 per tenant: a queue of 8
		opts.PollInterval = time.Hour
		perTenant := opts.Workers / 2
		start(t, NewRunner(db, nil, opts))
		// A's cap is in flight and its queue full; most of its backlog
		// still waits in the database.
		drive(t, nil, 0, func() bool { return inFlight.Load() == int32(perTenant) })
		later := emit(t, db, b, "TEST")
		if d := delivery(t, db, b, later.ID); d.LeaseUntil == nil {
			t.Fatalf("an event committed during a backlog was not handed over: %+v", d)
		}
		releaseB()
		drive(t, nil, 0, func() bool { return len(rcB.delivered()) == 1 })
		release()
		drive(t, nil, 0, func() bool { return len(rcA.delivered()) == len(backlog) })
		if got, gotB := len(rcA.all()), len(rcB.all()); got != len(backlog) || gotB != 1 {
			t.Fatalf("%d and %d requests for %d and 1 events", got, gotB, len(backlog))
		}
		if m := most.Load(); m > int32(perTenant) {
			t.Fatalf("%d attempts of one tenant at once; the cap is %d", m, perTenant)
		}
	})
}

// While a backlog waits in the database (here: a start with deliveries
// queued), a claim fills this node's queue up to the hand-over bound, a
// tenant's cap of attempts plus handoffQueueFactor times it, rather than
// taking only the workers free at that moment; the cap still holds the
// attempts in flight, and every event goes out once.
func TestRunner_BacklogClaimsFillTheQueue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		rc, release, inFlight, most := gatedReceiver(t)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		var ids []string
		for range 20 {
			ids = append(ids, emit(t, db, tn, "TEST").ID)
		}
		opts := testOptions() // 4 workers, 2 per tenant
		opts.PollInterval = time.Hour
		perTenant := opts.Workers / 2
		start(t, NewRunner(db, nil, opts))
		drive(t, nil, 0, func() bool { return inFlight.Load() == int32(perTenant) })
		leased := 0
		for _, id := range ids {
			if d := delivery(t, db, tn, id); d.State == "PENDING" && d.LeaseUntil != nil {
				leased++
			}
		}
		if want := perTenant * (1 + handoffQueueFactor); leased != want {
			t.Fatalf("%d deliveries leased to this node, want %d (%d in flight and a queue of %d)",
				leased, want, perTenant, handoffQueueFactor*perTenant)
		}
		release()
		drive(t, nil, 0, func() bool { return len(rc.delivered()) == len(ids) })
		if got := len(rc.all()); got != len(ids) {
			t.Fatalf("%d requests for %d events", got, len(ids))
		}
		if m := most.Load(); m > int32(perTenant) {
			t.Fatalf("%d attempts of one tenant at once; the cap is %d", m, perTenant)
		}
	})
}
