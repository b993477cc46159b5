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

// Two nodes on one database share the work: every event arrives, and no
// event is ever being delivered by both at once.
func TestDelivery_TwoNodesShareWork(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		var mu sync.Mutex
		active := map[string]bool{}
		rc := newReceiver(t, func(_ http.ResponseWriter, r *http.Request) int {
			id := r.Header.Get("webhook-id")
			mu.Lock()
			if active[id] {
				t.Errorf("%s is being delivered twice at once", id)
			}
			active[id] = true
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			delete(active, id)
			mu.Unlock()
			return http.StatusOK
		})
		want := map[string]bool{}
		var tenants []store.Tenant
		for range 4 {
			tenants = append(tenants, newTenant(t, db, store.EnvSandbox, rc.URL("/hook")))
		}
		for i := range 40 {
			want[emit(t, db, tenants[i%4], "TEST").ID] = true
		}
		start(t, NewRunner(db, nil, testOptions()))
		start(t, NewRunner(db, nil, testOptions()))
		drive(t, nil, 0, func() bool { return len(rc.delivered()) == len(want) })
		if got := len(rc.all()); got != len(want) {
			t.Fatalf("%d requests for %d events: with live leases and a healthy receiver, no event is sent twice", got, len(want))
		}
	})
}

// A receiver that never answers holds at most PerTenant workers; other
// tenants' events keep flowing.
func TestDelivery_HangingReceiverDoesNotBlockOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		release := make(chan struct{})
		var hanging atomic.Int32
		stuck := newReceiver(t, func(http.ResponseWriter, *http.Request) int {
			hanging.Add(1)
			<-release
			return http.StatusOK
		})
		healthy := newReceiver(t, nil)
		slow := newTenant(t, db, store.EnvSandbox, stuck.URL("/slow"))
		fine := newTenant(t, db, store.EnvSandbox, healthy.URL("/fine"))
		for range 10 {
			emit(t, db, slow, "TEST")
		}
		want := map[string]bool{}
		for range 5 {
			want[emit(t, db, fine, "TEST").ID] = true
		}
		opts := testOptions() // 4 workers, 2 per tenant
		opts.RequestTimeout = time.Minute
		stop := start(t, NewRunner(db, nil, opts))
		drive(t, nil, 0, func() bool { return len(healthy.delivered()) == len(want) })
		if n := hanging.Load(); n > int32(opts.Workers/2) {
			t.Fatalf("%d requests hang on one tenant; the cap is %d", n, opts.Workers/2)
		}
		close(release)
		stop()
	})
}
