package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/openapitest"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// env is one server over one fresh store, with the default platform's two
// tokens ready to use.
type env struct {
	t          *testing.T
	db         *store.DB
	srv        *Server
	platformID string
	sandbox    string // "clientId:secret"
	production string
	logs       *syncBuffer
	// undocumented marks paths registered only by tests, which the OpenAPI
	// check skips.
	undocumented map[string]bool
	// stopBackground stops the node's background work (driveByHand).
	stopBackground func()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t *testing.T, db *store.DB, opts Options) *env {
	t.Helper()
	ctx := context.Background()
	p, created, err := platforms.Bootstrap(ctx, db)
	if err != nil || created == nil {
		t.Fatalf("bootstrap: %v", err)
	}
	if opts.RateLimit == 0 {
		opts.RateLimit = -1
	}
	if opts.WebhookAddresses == 0 { // the receivers of tests listen on loopback
		opts.WebhookAddresses = webhooks.AddressesAny
	}
	e := &env{t: t, db: db, platformID: p.ID, sandbox: created.SandboxToken, production: created.ProductionToken,
		logs: &syncBuffer{}, undocumented: map[string]bool{}}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// Built and started as cmd/paymentsd builds and starts it, background
	// work included, so the tests drive the binary's wiring.
	node, err := NewNode(ctx, db, log, NodeOptions{API: opts, Webhooks: webhooks.Options{Addresses: opts.WebhookAddresses}})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = node.API
	runCtx, stop := context.WithCancel(ctx)
	wait := node.Start(runCtx)
	e.stopBackground = sync.OnceFunc(func() { stop(); wait() })
	t.Cleanup(e.stopBackground)
	return e
}

// driveByHand stops the node's background work (webhook and rail runners,
// bulk imports, sweeps) for a test that runs that work itself, with its own
// options or step by step. Call it before creating the work: what the node
// has taken already stays leased to it.
func (e *env) driveByHand() { e.stopBackground() }

// eachEnv runs fn on a fresh server over every store engine.
func eachEnv(t *testing.T, fn func(t *testing.T, e *env)) {
	storetest.Each(t, func(t *testing.T, db *store.DB) { fn(t, newEnv(t, db, Options{})) })
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Code returns the error code of an error response.
func (r resp) Code(t *testing.T) string {
	t.Helper()
	c, _ := r.JSON(t)["code"].(string)
	return c
}

type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func withCreds(creds string) reqOpt {
	return func(r *http.Request) {
		if creds == "" {
			r.Header.Del("Authorization")
			return
		}
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(creds)))
	}
}

// do sends a request to the router. API paths are given without the version
// prefix; paths starting with "//" are sent as is (minus one slash). The
// sandbox token is used unless an option says otherwise. Every response is
// checked against the OpenAPI document.
func (e *env) do(method, path string, body any, opts ...reqOpt) resp {
	e.t.Helper()
	var rdr io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rdr = strings.NewReader(b)
	case []byte:
		rdr = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rdr = bytes.NewReader(buf)
	}
	url := "/" + Version + path
	if strings.HasPrefix(path, "//") {
		url = path[1:]
	}
	req := httptest.NewRequest(method, url, rdr)
	withCreds(e.sandbox)(req)
	if rdr != nil {
		// As a client sends JSON; multipart and media type tests override it.
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	res := resp{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if res.Header.Get("X-Request-Id") == "" {
		e.t.Errorf("%s %s: no X-Request-Id on the response", method, url)
	}
	if res.Status >= 400 && res.Status != 405 {
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			e.t.Errorf("%s %s: error with Content-Type %q", method, url, ct)
		}
		m := res.JSON(e.t)
		if c, _ := m["code"].(string); c == "" {
			e.t.Errorf("%s %s: error body without code: %s", method, url, res.Body)
		}
		if r, _ := m["reason"].(string); r == "" {
			e.t.Errorf("%s %s: error body without reason: %s", method, url, res.Body)
		}
		// For clients of the hosted API: message repeats reason, status is
		// the HTTP status.
		if m["message"] != m["reason"] || m["status"] != float64(res.Status) {
			e.t.Errorf("%s %s: error body without message = reason and status = %d: %s", method, url, res.Status, res.Body)
		}
	}
	// Unmatched paths and methods belong to no documented operation.
	unmatched := res.Status == http.StatusMethodNotAllowed ||
		(res.Status == http.StatusNotFound && strings.HasPrefix(string(res.Body), `{"code":"NOT_FOUND","reason":"No endpoint`))
	if !e.undocumented[url] && !unmatched {
		openapitest.Check(e.t, req, res.Status, res.Header, res.Body)
	}
	return res
}

// expect fails unless r has status (and, for errors, code).
func expect(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got := r.Code(t); got != code {
			t.Fatalf("code %q, want %q: %s", got, code, r.Body)
		}
	}
}

// fieldErrors maps details.errors[].field to its constraint.
func fieldErrors(t *testing.T, r resp) map[string]string {
	t.Helper()
	out := map[string]string{}
	details, _ := r.JSON(t)["details"].(map[string]any)
	list, _ := details["errors"].([]any)
	for _, x := range list {
		m := x.(map[string]any)
		out[m["field"].(string)] = m["constraint"].(string)
	}
	return out
}

// snapshot captures the stored state a request could change, to prove a
// refused request changed nothing.
func (e *env) snapshot() string {
	e.t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, envName := range []string{store.EnvSandbox, store.EnvProduction} {
		tn := store.Tenant{PlatformID: e.platformID, Env: envName}
		toks, _, err := e.db.Read().ListTokens(ctx, tn, store.TokenFilter{}, "", 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, tok := range toks {
			b.WriteString(tok.ID + tok.SecretHash + tok.UpdatedAt.String() + "\n")
		}
		c, err := e.db.Read().GetPlatformConfig(ctx, tn, false)
		if err != nil {
			e.t.Fatal(err)
		}
		b.Write(c.Document)
		b.WriteString(c.UpdatedAt.String())
	}
	return b.String()
}
