package httpapi

import (
	"context"
	"crypto/ecdsa"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/webhooks"
	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// hookClock is a store clock the test moves by hand.
type hookClock struct{ us atomic.Int64 }

func (c *hookClock) Now() time.Time          { return time.UnixMicro(c.us.Load()).UTC() }
func (c *hookClock) Advance(d time.Duration) { c.us.Add(d.Microseconds()) }

// eachHookEnv runs fn on a fresh server over every engine, with a clock the
// test controls (set before anything reads it).
func eachHookEnv(t *testing.T, fn func(t *testing.T, e *env, c *hookClock)) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := &hookClock{}
		c.us.Store(time.Now().UTC().Truncate(time.Second).UnixMicro())
		db.SetClock(c.Now)
		fn(t, newEnv(t, db, Options{}), c)
	})
}

func (e *env) sandboxTenant() store.Tenant {
	return store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}
}

// hookEmit records an event as a capability would, in its own transaction.
func (e *env) hookEmit(t *testing.T, typ, resourceID string) events.Envelope {
	t.Helper()
	var env events.Envelope
	err := e.db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		env, err = events.Emit(context.Background(), tx, e.sandboxTenant(), typ, resourceID, map[string]string{"id": resourceID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// hookRunner starts delivery workers that log into the env's log, until the
// test ends or stop is called.
func (e *env) hookRunner(t *testing.T, opts webhooks.Options) (stop func()) {
	e.driveByHand()
	if opts.PollInterval == 0 {
		opts.PollInterval = 5 * time.Millisecond
	}
	if opts.Addresses == 0 { // the receivers of tests listen on loopback
		opts.Addresses = webhooks.AddressesAny
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	go func() { webhooks.Run(ctx, e.db, log, opts); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// hookReceiver is a webhook endpoint on loopback that keeps what it got.
type hookReceiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []hookDelivery
}

type hookDelivery struct {
	Header http.Header
	Body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.status.Store(http.StatusOK)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, hookDelivery{Header: r.Header.Clone(), Body: body})
		rc.mu.Unlock()
		w.WriteHeader(int(rc.status.Load()))
		_, _ = w.Write([]byte("thanks"))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) deliveries() []hookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookDelivery(nil), rc.got...)
}

func (e *env) setWebhookEndpoint(t *testing.T, u string) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", map[string]any{"webhookEndpoint": u}), http.StatusOK, "")
}

// waitUntil polls cond for up to 20 real seconds.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The events API: filters by type, resource and time, keyset pages without
// gaps or repeats, cursors bound to their filters, and tenancy.
func TestEvents_ListFiltersAndPagination(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		e.driveByHand() // the deliveries are to stay PENDING
		t0 := c.Now()
		var ids []string
		for i := range 5 {
			typ, res := events.OutgoingPaymentProcessing, "Transaction:1"
			if i%2 == 1 {
				typ, res = events.OutgoingPaymentCompleted, "Transaction:2"
			}
			ids = append(ids, e.hookEmit(t, typ, res).ID)
			c.Advance(time.Minute)
		}
		list := func(query string) (got []string, body map[string]any) {
			t.Helper()
			r := e.do("GET", "/events"+query, nil)
			expect(t, r, http.StatusOK, "")
			body = r.JSON(t)
			for _, x := range body["data"].([]any) {
				got = append(got, x.(map[string]any)["id"].(string))
			}
			return got, body
		}
		all, body := list("")
		if strings.Join(all, ",") != strings.Join(ids, ",") || body["totalCount"] != float64(5) {
			t.Fatalf("all events, oldest first: %v", body)
		}
		first := body["data"].([]any)[0].(map[string]any)
		if first["type"] != "OUTGOING_PAYMENT.PROCESSING" || first["resourceId"] != "Transaction:1" ||
			first["data"].(map[string]any)["id"] != "Transaction:1" || first["delivery"].(map[string]any)["status"] != "PENDING" {
			t.Fatalf("event shape: %v", first)
		}
		if got, _ := list("?type=OUTGOING_PAYMENT.COMPLETED"); len(got) != 2 || got[0] != ids[1] {
			t.Fatalf("type filter: %v", got)
		}
		if got, _ := list("?resourceId=Transaction:1"); len(got) != 3 {
			t.Fatalf("resource filter: %v", got)
		}
		from, to := t0.Add(time.Minute).Format(time.RFC3339), t0.Add(3*time.Minute).Format(time.RFC3339)
		if got, _ := list("?createdAfter=" + from + "&createdBefore=" + to); strings.Join(got, ",") != strings.Join(ids[1:4], ",") {
			t.Fatalf("time window [%s, %s]: %v", from, to, got)
		}
		// Pages of 2: no gaps, no repeats, nextCursor only while hasMore.
		var paged []string
		query := "?limit=2"
		for range 5 {
			got, body := list(query)
			paged = append(paged, got...)
			if body["hasMore"] != true {
				if _, has := body["nextCursor"]; has {
					t.Fatal("nextCursor without hasMore")
				}
				break
			}
			query = "?limit=2&cursor=" + url.QueryEscape(body["nextCursor"].(string))
		}
		if strings.Join(paged, ",") != strings.Join(ids, ",") {
			t.Fatalf("paged %v, want %v", paged, ids)
		}
		_, body = list("?limit=2")
		r := e.do("GET", "/events?limit=2&type=TEST&cursor="+url.QueryEscape(body["nextCursor"].(string)), nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		r = e.do("GET", "/events?createdAfter=yesterday&limit=0&type="+strings.Repeat("x", 256), nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if got := fieldErrors(t, r); got["createdAfter"] != "format" || got["limit"] != "minimum" || got["type"] != "maxLength" {
			t.Fatalf("field errors %v", got)
		}
		// Another environment sees none of them.
		r = e.do("GET", "/events", nil, withCreds(e.production))
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["totalCount"] != float64(0) {
			t.Fatalf("production sees sandbox events: %s", r.Body)
		}
		expect(t, e.do("GET", "/events/"+ids[0], nil, withCreds(e.production)), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("GET", "/events/Event:nope", nil), http.StatusNotFound, "NOT_FOUND")
	})
}

// GET /events/{id} shows every attempt; redelivery sends the same event
// again, with the same webhook-id.
func TestEvents_AttemptsAndRedelivery(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		e.driveByHand() // its own runners
		rc := newHookReceiver(t)
		e.setWebhookEndpoint(t, rc.URL+"/hook")
		ev := e.hookEmit(t, events.CardStatusChange, "Card:1")
		stop := e.hookRunner(t, webhooks.Options{})
		waitUntil(t, func() bool { return len(rc.deliveries()) == 1 })
		var got map[string]any
		waitUntil(t, func() bool {
			got = e.do("GET", "/events/"+ev.ID, nil).JSON(t)
			return got["delivery"].(map[string]any)["status"] == "DELIVERED"
		})
		stop()
		attempts := got["attempts"].([]any)
		a := attempts[0].(map[string]any)
		if len(attempts) != 1 || a["responseStatus"] != float64(200) || a["responseExcerpt"] != "thanks" ||
			a["url"] != rc.URL+"/hook" || a["latencyMs"] == nil || a["attemptedAt"] == nil {
			t.Fatalf("attempts %v", attempts)
		}

		r := e.do("POST", "/events/"+ev.ID+"/redeliver", nil)
		expect(t, r, http.StatusAccepted, "")
		if d := r.JSON(t)["delivery"].(map[string]any); d["status"] != "PENDING" || d["attemptCount"] != float64(0) {
			t.Fatalf("after redeliver: %v", d)
		}
		e.hookRunner(t, webhooks.Options{})
		waitUntil(t, func() bool {
			return len(e.do("GET", "/events/"+ev.ID, nil).JSON(t)["attempts"].([]any)) == 2
		})
		ds := rc.deliveries()
		if len(ds) != 2 || ds[0].Header.Get("webhook-id") != ev.ID || ds[1].Header.Get("webhook-id") != ev.ID ||
			string(ds[0].Body) != string(ds[1].Body) {
			t.Fatalf("redelivery must repeat the same event: %d deliveries", len(ds))
		}

		expect(t, e.do("POST", "/events/Event:nope/redeliver", nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("POST", "/events/"+ev.ID+"/redeliver", `{"now":true}`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/events/"+ev.ID+"/redeliver", nil, withCreds(e.newToken(t, "VIEW"))), http.StatusForbidden, "FORBIDDEN")
	})
}

// A redelivery asked for while an attempt runs would race with it.
func TestEvents_RedeliverWhileInFlight(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		e.driveByHand() // it claims the delivery itself
		ev := e.hookEmit(t, events.Test, "x")
		claims, err := e.db.ClaimDeliveries(context.Background(), "worker", time.Minute, 1, 1)
		if err != nil || len(claims) != 1 {
			t.Fatalf("%v %v", claims, err)
		}
		r := e.do("GET", "/events/"+ev.ID, nil)
		if r.JSON(t)["delivery"].(map[string]any)["status"] != "IN_PROGRESS" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("POST", "/events/"+ev.ID+"/redeliver", nil), http.StatusConflict, "OPERATION_IN_PROGRESS")
		c.Advance(2 * time.Minute) // the worker died; its lease is over
		expect(t, e.do("POST", "/events/"+ev.ID+"/redeliver", nil), http.StatusAccepted, "")
	})
}

// A delivery handed over at its commit has no row until its first outcome
// (the hand-over journal, store/handoff_journal.go); meanwhile the API shows
// it as the leased row it replaced: IN_PROGRESS, one attempt, and a
// redelivery is refused. Its outcome then writes the row.
func TestEvents_HandedOverDeliveryInFlight(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		gate, arrived := make(chan struct{}), make(chan struct{}, 1)
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-gate
			w.WriteHeader(http.StatusOK)
		}))
		t.Cleanup(rc.Close)
		t.Cleanup(func() { close(gate) })
		e.setWebhookEndpoint(t, rc.URL+"/hook")
		e.hookRunner(t, webhooks.Options{})
		waitUntil(t, e.db.TakingHandoffs)
		ev := e.hookEmit(t, events.Test, "x")
		<-arrived
		d, err := e.db.Read().GetDelivery(context.Background(), e.sandboxTenant(), ev.ID, false)
		if err != nil || d.Journal == "" {
			t.Fatalf("not handed over without a row: %+v (%v)", d, err)
		}
		got := e.do("GET", "/events/"+ev.ID, nil).JSON(t)["delivery"].(map[string]any)
		if got["status"] != "IN_PROGRESS" || got["attemptCount"] != float64(1) {
			t.Fatalf("in flight: %v", got)
		}
		list := e.do("GET", "/events", nil).JSON(t)["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["delivery"].(map[string]any)["status"] != "IN_PROGRESS" {
			t.Fatalf("listed: %v", list)
		}
		expect(t, e.do("POST", "/events/"+ev.ID+"/redeliver", nil), http.StatusConflict, "OPERATION_IN_PROGRESS")
		gate <- struct{}{}
		waitUntil(t, func() bool {
			d := e.do("GET", "/events/"+ev.ID, nil).JSON(t)["delivery"].(map[string]any)
			return d["status"] == "DELIVERED"
		})
		if d, err := e.db.Read().GetDelivery(context.Background(), e.sandboxTenant(), ev.ID, false); err != nil ||
			d.Journal != "" || d.State != store.DeliveryDelivered || d.Attempts != 1 {
			t.Fatalf("after the outcome: %+v (%v)", d, err)
		}
	})
}

// POST /sandbox/webhooks/test: the receiver's answer, or the spec's codes
// (R-ERR-07: both are 400). Sandbox tokens only.
func TestSandboxWebhookTest_R_ERR_07(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		expect(t, e.do("POST", "/sandbox/webhooks/test", nil), http.StatusBadRequest, "WEBHOOK_ENDPOINT_NOT_SET")

		rc := newHookReceiver(t)
		e.setWebhookEndpoint(t, rc.URL+"/hook")
		r := e.do("POST", "/sandbox/webhooks/test", nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["url"] != rc.URL+"/hook" || m["response_status"] != float64(200) || m["response_body"] != "thanks" {
			t.Fatalf("%s", r.Body)
		}
		d := rc.deliveries()[0]
		if d.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(d.Body), `"type":"TEST"`) {
			t.Fatalf("%v %s", d.Header, d.Body)
		}

		rc.status.Store(http.StatusServiceUnavailable)
		r = e.do("POST", "/sandbox/webhooks/test", nil)
		expect(t, r, http.StatusBadRequest, "WEBHOOK_DELIVERY_ERROR")
		if det := r.JSON(t)["details"].(map[string]any); det["response_status"] != float64(503) || det["response_body"] != "thanks" {
			t.Fatalf("details %v", det)
		}
		e.setWebhookEndpoint(t, "http://127.0.0.1:1/closed")
		expect(t, e.do("POST", "/sandbox/webhooks/test", nil), http.StatusBadRequest, "WEBHOOK_DELIVERY_ERROR")

		expect(t, e.do("POST", "/sandbox/webhooks/test", `{"x":1}`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/sandbox/webhooks/test", nil, withCreds(e.production)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", "/sandbox/webhooks/test", nil, withCreds(e.newToken(t, "VIEW"))), http.StatusForbidden, "FORBIDDEN")

		// Each test event is in the events API with its one attempt.
		r = e.do("GET", "/events?type=TEST", nil)
		if r.JSON(t)["totalCount"] != float64(3) {
			t.Fatalf("%s", r.Body)
		}
	})
}

// Keys: the secrets (two during a rotation) and the published public key
// verify what receivers get.
func TestWebhookKeys_RotationAndPublicKey(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		r := e.do("GET", "/webhooks/signing-keys", nil)
		expect(t, r, http.StatusOK, "")
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Fatal("a response carrying secrets must not be cached")
		}
		before := r.JSON(t)["secrets"].([]any)
		if len(before) != 1 {
			t.Fatalf("%s", r.Body)
		}
		r = e.do("POST", "/webhooks/secret/rotate", `{"overlapSeconds":3600}`)
		expect(t, r, http.StatusOK, "")
		after := r.JSON(t)["secrets"].([]any)
		if len(after) != 2 || after[1].(map[string]any)["id"] != before[0].(map[string]any)["id"] {
			t.Fatalf("%s", r.Body)
		}
		r = e.do("POST", "/webhooks/secret/rotate", `{"overlapSeconds":-1,"extra":true}`)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if got := fieldErrors(t, r); got["overlapSeconds"] != "maximum" || got["extra"] != "additionalProperties" {
			t.Fatalf("%v", got)
		}
		view := e.newToken(t, "VIEW")
		expect(t, e.do("GET", "/webhooks/signing-keys", nil, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", "/webhooks/secret/rotate", nil, withCreds(view)), http.StatusForbidden, "FORBIDDEN")

		r = e.do("GET", "/webhooks/public-key", nil, withCreds(view))
		expect(t, r, http.StatusOK, "")
		pub, err := signing.ParsePublicKeyPEM(r.Body)
		if err != nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("public key: %v %q", err, r.Header.Get("Content-Type"))
		}
		if listed := e.do("GET", "/webhooks/signing-keys", nil).JSON(t)["publicKey"]; listed != string(r.Body) {
			t.Fatalf("two different public keys published:\n%v\n%s", listed, r.Body)
		}

		rc := newHookReceiver(t)
		e.setWebhookEndpoint(t, rc.URL)
		expect(t, e.do("POST", "/sandbox/webhooks/test", nil), http.StatusOK, "")
		d := rc.deliveries()[0]
		for i, s := range after {
			sec, err := signing.ParseSecret(s.(map[string]any)["secret"].(string))
			if err != nil {
				t.Fatal(err)
			}
			v := signing.Verifier{Secrets: []signing.Secret{sec}, PublicKey: pub, Now: c.Now}
			if err := v.Verify(d.Header, d.Body); err != nil {
				t.Fatalf("secret %d of the overlap: %v", i, err)
			}
		}
		checkServiceSignature(t, pub, d)
	})
}

func checkServiceSignature(t *testing.T, pub *ecdsa.PublicKey, d hookDelivery) {
	t.Helper()
	if err := signing.VerifyBody(pub, d.Header.Get(signing.ServiceSignatureHeader), d.Body); err != nil {
		t.Fatal(err)
	}
}

// A receiver that never answers ties up delivery workers, never the API:
// while deliveries hang, API requests (reads and writes on the same
// database) complete. The bound is loose on purpose: the hanging attempts
// last a minute, the requests must finish long before.
func TestWebhooks_HangingReceiverDoesNotSlowTheAPI(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		e.driveByHand() // its own runners
		release := make(chan struct{})
		var hanging atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hanging.Add(1)
			<-release
		}))
		defer srv.Close()
		defer close(release)
		e.setWebhookEndpoint(t, srv.URL)
		var ids []string
		for range 10 {
			ids = append(ids, e.hookEmit(t, events.Test, "x").ID)
		}
		e.hookRunner(t, webhooks.Options{Workers: 4, PerTenant: 4, RequestTimeout: time.Minute})
		waitUntil(t, func() bool { return hanging.Load() == 4 })

		began := time.Now()
		expect(t, e.do("GET", "/events", nil), http.StatusOK, "")
		expect(t, e.do("POST", "/tokens", `{"name":"during","permissions":["VIEW"]}`), http.StatusCreated, "")
		expect(t, e.do("PATCH", "/config", `{"umaDomain":"example.com"}`), http.StatusOK, "")
		e.hookEmit(t, events.Test, "y") // a capability's write transaction
		r := e.do("GET", "/events/"+ids[0], nil)
		expect(t, r, http.StatusOK, "")
		if took := time.Since(began); took > 10*time.Second {
			t.Fatalf("API requests took %v while deliveries hang", took)
		}
		if hanging.Load() != 4 {
			t.Fatal("the deliveries were expected to still hang")
		}
	})
}

// Logs of deliveries name the event and the receiver's host, never secrets
// or the endpoint's query string.
func TestWebhooks_LogsHoldNoSecrets(t *testing.T) {
	eachHookEnv(t, func(t *testing.T, e *env, c *hookClock) {
		e.driveByHand() // its own runners
		rc := newHookReceiver(t)
		rc.status.Store(http.StatusBadGateway)
		e.setWebhookEndpoint(t, rc.URL+"/hook?token=receiver-own-secret")
		ev := e.hookEmit(t, events.Test, "x")
		e.hookRunner(t, webhooks.Options{})
		waitUntil(t, func() bool { return strings.Contains(e.logs.String(), ev.ID) })
		keys := e.do("GET", "/webhooks/signing-keys", nil).JSON(t)["secrets"].([]any)
		secret := keys[0].(map[string]any)["secret"].(string)
		logs := e.logs.String()
		for _, s := range []string{secret, strings.TrimPrefix(secret, "whsec_"), "receiver-own-secret", "v1,"} {
			if strings.Contains(logs, s) {
				t.Fatalf("log contains %q", s)
			}
		}
	})
}
