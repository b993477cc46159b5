package webhooks

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// A receiver that never accepts: Retry-After pushes the next attempt back,
// and after about three days the delivery is FAILED and no longer tried.
func TestDelivery_RetryAfterThenGivesUp(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) int {
			w.Header().Set("Retry-After", "7200")
			return http.StatusTooManyRequests
		})
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		ev := emit(t, db, tn, "TEST")
		t0 := c.Now()
		start(t, NewRunner(db, nil, testOptions()))
		drive(t, nil, 0, func() bool { return len(attempts(t, db, tn, ev.ID)) == 1 })
		if d := delivery(t, db, tn, ev.ID); d.NextAttemptAt.Before(t0.Add(2 * time.Hour)) {
			t.Fatalf("Retry-After: 7200 not honoured: next attempt at %v, %v after the first", d.NextAttemptAt, d.NextAttemptAt.Sub(t0))
		}
		settle(t, db, c, []store.Tenant{tn}, func() bool { return delivery(t, db, tn, ev.ID).State == store.DeliveryFailed })
		as := attempts(t, db, tn, ev.ID)
		last := as[len(as)-1].AttemptedAt
		if len(as) < 8 || len(as) > 25 || last.Sub(t0) < 48*time.Hour || last.Sub(t0) > 72*time.Hour {
			t.Fatalf("%d attempts, the last %v after the first", len(as), last.Sub(t0))
		}
		for _, a := range as {
			if a.StatusCode != 429 || !strings.Contains(a.Error, "429") {
				t.Fatalf("attempt %+v", a)
			}
		}
	})
}

// Without a webhook endpoint there is nothing to retry: the delivery is
// SKIPPED with an attempt saying why, and a redelivery after the endpoint is
// set goes through.
func TestDelivery_NoEndpointIsSkipped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		tn := newTenant(t, db, store.EnvSandbox, "")
		ev := emit(t, db, tn, "TEST")
		start(t, NewRunner(db, nil, testOptions()))
		drive(t, nil, 0, func() bool { return delivery(t, db, tn, ev.ID).State == store.DeliverySkipped })
		if as := attempts(t, db, tn, ev.ID); len(as) != 1 || !strings.Contains(as[0].Error, "no webhook endpoint") {
			t.Fatalf("%+v", as)
		}
		rc := newReceiver(t, nil)
		setEndpoint(t, db, tn, rc.URL("/late"))
		if _, err := NewService(db, nil, ServiceOptions{}).Redeliver(ctx, tn, ev.ID); err != nil {
			t.Fatal(err)
		}
		drive(t, c, 0, func() bool { return rc.delivered()[ev.ID] })
	})
}

// Events and their attempts are kept 30 days, then purged; secrets are
// purged once their overlap is over.
func TestRetention_PurgesAfterThirtyDays(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		rc := newReceiver(t, nil)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		old := emit(t, db, tn, "TEST")
		r := NewRunner(db, nil, testOptions())
		stop := start(t, r)
		drive(t, nil, 0, func() bool { return delivery(t, db, tn, old.ID).State == store.DeliveryDelivered })
		stop()
		if err := rotateSecret(ctx, db, tn, time.Hour); err != nil {
			t.Fatal(err)
		}
		c.Advance(29 * 24 * time.Hour)
		fresh := emit(t, db, tn, "TEST")
		r.purge(ctx)
		if _, err := db.Read().GetEvent(ctx, tn, old.ID); err != nil {
			t.Fatalf("a 29-day-old event was purged: %v", err)
		}
		c.Advance(2 * 24 * time.Hour)
		r.purge(ctx)
		if _, err := db.Read().GetEvent(ctx, tn, old.ID); err == nil || len(attempts(t, db, tn, old.ID)) != 0 {
			t.Fatal("a 31-day-old event and its attempts were kept")
		}
		if _, err := db.Read().GetEvent(ctx, tn, fresh.ID); err != nil {
			t.Fatalf("a 2-day-old event was purged: %v", err)
		}
		if list, _ := db.Read().ActiveWebhookSecrets(ctx, tn, time.Time{}); len(list) != 1 {
			t.Fatalf("expired secrets are purged, the current one stays: %d left", len(list))
		}
	})
}
