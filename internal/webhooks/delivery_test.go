package webhooks

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// checkDeliveries asserts what a receiver must be able to rely on: every
// request carries valid signatures, its body is the envelope of the event its
// webhook-id names, repeats of an id carry the same body, and every event in
// want was answered 2xx at least once.
func checkDeliveries(t *testing.T, got []received, want map[string]bool, verify func(path string) signing.Verifier) {
	t.Helper()
	bodies := map[string][]byte{}
	for _, g := range got {
		if err := verify(g.Path).Verify(g.Header, g.Body); err != nil {
			t.Fatalf("delivery of %s does not verify: %v", g.ID, err)
		}
		if !want[g.ID] {
			t.Fatalf("received %s, which was never emitted", g.ID)
		}
		if !bytes.Contains(g.Body, []byte(`"id":"`+g.ID+`"`)) {
			t.Fatalf("webhook-id %s does not name the envelope %s", g.ID, g.Body)
		}
		if prev, seen := bodies[g.ID]; seen && !bytes.Equal(prev, g.Body) {
			t.Fatalf("a repeat of %s changed the body", g.ID)
		}
		bodies[g.ID] = g.Body
	}
	ok := map[string]bool{}
	for _, g := range got {
		if g.Status < 300 {
			ok[g.ID] = true
		}
	}
	for id := range want {
		if !ok[id] {
			t.Fatalf("%s was never delivered", id)
		}
	}
}

// A receiver that answers 503 for its first minutes, then 200, ends up with
// every event of every tenant, properly signed, each id answered 2xx exactly
// once by this single well-behaved node.
func TestDelivery_FlakyReceiverGetsEveryEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		down := c.Now().Add(10 * time.Minute)
		rc := newReceiver(t, func(_ http.ResponseWriter, r *http.Request) int {
			if c.Now().Before(down) {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		tenants := map[string]store.Tenant{}
		want := map[string]bool{}
		for i := range 3 {
			path := fmt.Sprintf("/t%d", i)
			tenants[path] = newTenant(t, db, store.EnvSandbox, rc.URL(path))
		}
		for i := range 15 {
			path := fmt.Sprintf("/t%d", i%3)
			want[emit(t, db, tenants[path], "TEST").ID] = true
		}
		verifiers := map[string]signing.Verifier{}
		for path, tn := range tenants {
			verifiers[path] = verifier(t, db, tn, c)
		}
		start(t, NewRunner(db, nil, testOptions()))
		var all []store.Tenant
		for _, tn := range tenants {
			all = append(all, tn)
		}
		settle(t, db, c, all, func() bool { return len(rc.delivered()) == len(want) })

		got := rc.all()
		checkDeliveries(t, got, want, func(path string) signing.Verifier { return verifiers[path] })
		oks := 0
		for _, g := range got {
			if g.Status == http.StatusOK {
				oks++
			}
		}
		if oks != len(want) {
			t.Fatalf("%d successful deliveries for %d events", oks, len(want))
		}
		if len(got) < 2*len(want) {
			t.Fatalf("only %d requests: the receiver was down for 10 minutes, so every event needed retries", len(got))
		}
		// Each event's history is recorded: 503s with their excerpt, then one 200.
		for id := range want {
			tn := tenants[receivedPath(got, id)]
			// The last 200 is answered before its batch is written.
			drive(t, nil, 0, func() bool { return delivery(t, db, tn, id).State == store.DeliveryDelivered })
			as := attempts(t, db, tn, id)
			last := as[len(as)-1]
			if len(as) < 2 || as[0].StatusCode != 503 || last.StatusCode != 200 || last.ResponseExcerpt != `{"ok":true}` || last.Error != "" {
				t.Fatalf("attempts of %s: %+v", id, as)
			}
			if d := delivery(t, db, tn, id); d.State != store.DeliveryDelivered || d.DeliveredAt == nil {
				t.Fatalf("delivery %+v", d)
			}
		}
	})
}

func receivedPath(got []received, id string) string {
	for _, g := range got {
		if g.ID == id {
			return g.Path
		}
	}
	return ""
}

// Killed mid-delivery: the receiver was served but the attempt never
// recorded (the process died in between, or while the request was in
// flight). A node started on the same database redelivers with the same
// webhook-id once the dead node's lease expires, and events emitted while no
// node ran are delivered too. Nothing is lost.
func TestDelivery_CrashMidAttemptRedelivers(t *testing.T) {
	for _, mode := range []string{"after the receiver answered", "while the request was in flight"} {
		t.Run(mode, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				c := newClock(db)
				var inFlight atomic.Bool
				release := make(chan struct{})
				rc := newReceiver(t, func(_ http.ResponseWriter, r *http.Request) int {
					if mode == "while the request was in flight" && !inFlight.Swap(true) {
						<-release // the first request hangs until the node is gone
					}
					return http.StatusOK
				})
				defer close(release)
				tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
				ev := emit(t, db, tn, "TEST")

				opts := testOptions()
				opts.Lease = 2 * time.Minute
				first := NewRunner(db, nil, opts)
				rctx, kill := context.WithCancel(ctx)
				if mode == "after the receiver answered" {
					first.afterSend = func(context.Context) { kill() }
				}
				stopped := make(chan struct{})
				go func() { first.Run(rctx); close(stopped) }()
				if mode == "while the request was in flight" {
					drive(t, nil, 0, func() bool { return inFlight.Load() })
					kill()
				}
				<-stopped
				kill()
				if n := len(attempts(t, db, tn, ev.ID)); n != 0 {
					t.Fatalf("%d attempts recorded by a node that died before recording", n)
				}
				if d := delivery(t, db, tn, ev.ID); d.State != store.DeliveryPending || d.LeaseUntil == nil {
					t.Fatalf("the dead node's lease stays until it expires: %+v", d)
				}
				late := emit(t, db, tn, "TEST") // produced while no node runs

				start(t, NewRunner(db, nil, opts))
				drive(t, c, 10*time.Second, func() bool {
					return delivery(t, db, tn, ev.ID).State == store.DeliveryDelivered &&
						delivery(t, db, tn, late.ID).State == store.DeliveryDelivered
				})
				got := rc.all()
				v := verifier(t, db, tn, c)
				checkDeliveries(t, got, map[string]bool{ev.ID: true, late.ID: true}, func(string) signing.Verifier { return v })
				n := 0
				for _, g := range got {
					if g.ID == ev.ID {
						n++
					}
				}
				// The hung request of the dead node never completed, so the
				// receiver logged only the redelivery in that mode.
				if want := map[bool]int{true: 2, false: 1}[mode == "after the receiver answered"]; n != want {
					t.Fatalf("the interrupted event reached the receiver %d times, want %d (same webhook-id)", n, want)
				}
				if as := attempts(t, db, tn, ev.ID); len(as) != 1 || as[0].StatusCode != 200 {
					t.Fatalf("attempts %+v", as)
				}
			})
		})
	}
}
