package webhooks

import (
	"context"
	"crypto/ecdsa"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

var ctx = context.Background()

// clock is a store clock the test moves by hand, so that backoff measured in
// minutes and hours passes in milliseconds.
type clock struct{ us atomic.Int64 }

func newClock(db *store.DB) *clock {
	c := &clock{}
	c.us.Store(time.Now().UTC().Truncate(time.Second).UnixMicro())
	db.SetClock(c.Now) // before any goroutine reads the clock
	return c
}

func (c *clock) Now() time.Time          { return time.UnixMicro(c.us.Load()).UTC() }
func (c *clock) Advance(d time.Duration) { c.us.Add(d.Microseconds()) }
func (c *clock) Set(t time.Time)         { c.us.Store(t.UnixMicro()) }

// newTenant creates a platform and returns its tenant in env, with its
// webhook endpoint set to endpoint (none when empty).
func newTenant(t *testing.T, db *store.DB, env, endpoint string) store.Tenant {
	t.Helper()
	c, err := platforms.Create(ctx, db, "p", false)
	if err != nil {
		t.Fatal(err)
	}
	tn := store.Tenant{PlatformID: c.PlatformID, Env: env}
	if endpoint != "" {
		setEndpoint(t, db, tn, endpoint)
	}
	return tn
}

func setEndpoint(t *testing.T, db *store.DB, tn store.Tenant, endpoint string) {
	t.Helper()
	p := platformconfig.Patch{WebhookEndpoint: jsonx.Optional[string]{Set: true, Value: endpoint}}
	if _, err := (&platformconfig.Service{DB: db}).Update(ctx, tn, p); err != nil {
		t.Fatal(err)
	}
}

func emit(t *testing.T, db *store.DB, tn store.Tenant, typ string) events.Envelope {
	t.Helper()
	var env events.Envelope
	err := db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		env, err = events.Emit(ctx, tx, tn, typ, "Thing:1", map[string]any{"n": 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// received is one request a test receiver got.
type received struct {
	ID     string // webhook-id
	Path   string
	Header http.Header
	Body   []byte
	Status int // what the receiver answered
}

// receiver is a webhook endpoint on loopback. answer decides each reply's
// status (nil: 200) and may set headers or block.
type receiver struct {
	srv    *httptest.Server
	answer func(w http.ResponseWriter, r *http.Request) int
	mu     sync.Mutex
	got    []received
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter, r *http.Request) int) *receiver {
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status := http.StatusOK
		if rc.answer != nil {
			status = rc.answer(w, r)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, received{ID: r.Header.Get("webhook-id"), Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Status: status})
		rc.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":` + map[bool]string{true: "true", false: "false"}[status < 300] + `}`))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) URL(path string) string { return rc.srv.URL + path }

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// delivered returns the ids the receiver answered 2xx.
func (rc *receiver) delivered() map[string]bool {
	out := map[string]bool{}
	for _, g := range rc.all() {
		if g.Status < 300 {
			out[g.ID] = true
		}
	}
	return out
}

// verifier checks deliveries to a tenant as a receiver would, with the
// tenant's current secrets and the published public key. Its clock is the
// store's, since webhook-timestamp comes from it.
func verifier(t *testing.T, db *store.DB, tn store.Tenant, c *clock) signing.Verifier {
	t.Helper()
	keys, err := NewService(db, nil, ServiceOptions{}).SigningKeys(ctx, tn)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []signing.Secret
	for _, s := range keys.Secrets {
		sec, err := signing.ParseSecret(s.Secret)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, sec)
	}
	pub, err := signing.ParsePublicKeyPEM([]byte(keys.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return signing.Verifier{Secrets: secrets, PublicKey: pub, Now: c.Now, Tolerance: time.Hour}
}

func publicKey(t *testing.T, db *store.DB) *ecdsa.PublicKey {
	t.Helper()
	pemBytes, err := NewService(db, nil, ServiceOptions{}).PublicKeyPEM(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.ParsePublicKeyPEM(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// testOptions make a runner fast under a hand-moved clock: it polls every few
// milliseconds, and its lease is long in store time so that moving the clock
// never expires the lease of an attempt still running.
func testOptions() Options {
	// Receivers of tests listen on loopback.
	return Options{Workers: 4, PollInterval: 5 * time.Millisecond, RequestTimeout: 5 * time.Second, Lease: time.Hour,
		Addresses: AddressesAny}
}

// start runs a runner until the test ends (or stop is called).
func start(t *testing.T, r *Runner) (stop func()) {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.Run(rctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// drive moves the clock by step until cond holds, or fails after a real
// 30 seconds.
func drive(t *testing.T, c *clock, step time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		if c != nil {
			c.Advance(step)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func delivery(t *testing.T, db *store.DB, tn store.Tenant, eventID string) store.Delivery {
	t.Helper()
	d, err := db.Read().GetDelivery(ctx, tn, eventID, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func attempts(t *testing.T, db *store.DB, tn store.Tenant, eventID string) []store.Attempt {
	t.Helper()
	list, err := db.Read().ListAttempts(ctx, tn, eventID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// settle moves the clock to the next scheduled attempt (plus a little, so
// that attempts due close together run as one batch) as soon as the runner
// has nothing left to do at the current time, until cond holds: a simulation
// in which no retry runs late because the clock raced ahead of the workers.
func settle(t *testing.T, db *store.DB, c *clock, tenants []store.Tenant, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		now := c.Now()
		busy, next := false, time.Time{}
		for _, tn := range tenants {
			rows, _, err := db.Read().ListEvents(ctx, tn, store.EventFilter{}, "", 10000)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				d := r.Delivery
				switch {
				case d == nil || d.State != store.DeliveryPending:
				case d.LeaseUntil != nil && !d.LeaseUntil.Before(now), !d.NextAttemptAt.After(now):
					busy = true
				case next.IsZero() || d.NextAttemptAt.Before(next):
					next = d.NextAttemptAt
				}
			}
		}
		if !busy && !next.IsZero() {
			c.Set(next.Add(15 * time.Second))
		}
		time.Sleep(2 * time.Millisecond)
	}
}
