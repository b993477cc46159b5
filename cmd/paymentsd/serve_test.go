package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run `paymentsd serve` itself (run, as main calls it) over a
// fresh SQLite file and talk to it over TCP, as a user following the README
// would.

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// served is one running paymentsd.
type served struct {
	base   string // http://host:port
	stdout *lockedBuffer
	stderr *lockedBuffer
}

// startServe runs paymentsd with args over dbURL (a fresh SQLite file when
// empty) until the test ends, and waits until it listens.
func startServe(t *testing.T, dbURL string, args ...string) *served {
	t.Helper()
	if dbURL == "" {
		dbURL = "sqlite:" + t.TempDir() + "/payments.db"
	}
	s := &served{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	args = append([]string{"--addr", "127.0.0.1:0", "--database-url", dbURL, "--log-format", "json",
		"--blob-dir", t.TempDir()}, args...)
	go func() { done <- run(ctx, args, s.stdout, s.stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("paymentsd: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for line := range strings.SplitSeq(s.stderr.String(), "\n") {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				s.base = "http://" + l.Addr
				return s
			}
		}
		select {
		case err := <-done:
			done <- err // for the cleanup, which waits on it
			t.Fatalf("paymentsd stopped: %v\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("paymentsd did not start listening:\n%s", s.stderr)
	return nil
}

// call sends one API request with basic credentials user:secret.
func (s *served) call(t *testing.T, creds, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+"/2025-10-13"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	user, secret, _ := strings.Cut(creds, ":")
	req.SetBasicAuth(user, secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		t.Fatalf("%s %s: not a JSON object: %s", method, path, raw)
	}
	return res.StatusCode, m
}

// Issue 16, item 1: the README quickstart's start, then the sandbox test
// webhook against a local receiver answers 200 with the receiver's status,
// and the TEST event is listed. It answered 404 on the binary, whose webhook
// runner leased the event before the request could.
func TestServe_SandboxWebhookTestReachesReceiver(t *testing.T) {
	t.Setenv("PAYMENTS_SANDBOX_TOKEN", "demo-sandbox:demo-secret")
	t.Setenv("PAYMENTS_PRODUCTION_TOKEN", "")
	var got sync.WaitGroup
	got.Add(1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer got.Done()
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "received")
	}))
	defer rc.Close()
	s := startServe(t, "")
	const auth = "demo-sandbox:demo-secret"
	if st, m := s.call(t, auth, "PATCH", "/config", `{"webhookEndpoint":"`+rc.URL+`/hooks"}`); st != http.StatusOK {
		t.Fatalf("PATCH /config: %d %v", st, m)
	}
	st, m := s.call(t, auth, "POST", "/sandbox/webhooks/test", "")
	if st != http.StatusOK || m["response_status"] != float64(http.StatusAccepted) || m["response_body"] != "received" ||
		m["url"] != rc.URL+"/hooks" {
		t.Fatalf("POST /sandbox/webhooks/test: %d %v", st, m)
	}
	got.Wait() // exactly one delivery: a second would panic the WaitGroup
	st, m = s.call(t, auth, "GET", "/events?type=TEST", "")
	if st != http.StatusOK || m["totalCount"] != float64(1) {
		t.Fatalf("GET /events?type=TEST: %d %v", st, m)
	}
}

// Issue 16, item 5: a first start generates and prints a token only for an
// environment whose PAYMENTS_<ENV>_TOKEN is not set; with both set it makes
// and prints none, and each environment has exactly the supplied token.
func TestServe_FirstStartPrintsOnlyGeneratedTokens(t *testing.T) {
	const sb, prod = "ci-sandbox:sandbox-secret-1", "ci-production:production-secret-0123456789"
	for _, c := range []struct {
		name                string
		sandbox, production string
	}{
		{"both supplied", sb, prod},
		{"sandbox supplied", sb, ""},
		{"none supplied", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PAYMENTS_SANDBOX_TOKEN", c.sandbox)
			t.Setenv("PAYMENTS_PRODUCTION_TOKEN", c.production)
			s := startServe(t, "")
			out := s.stdout.String()
			for env, supplied := range map[string]string{"sandbox": c.sandbox, "production": c.production} {
				printed := printedToken(out, env)
				creds := supplied
				if supplied == "" {
					if printed == "" {
						t.Fatalf("no %s token printed:\n%s", env, out)
					}
					creds = printed
				} else if printed != "" || strings.Contains(out, supplied) {
					t.Fatalf("%s token printed although supplied:\n%s", env, out)
				}
				st, m := s.call(t, creds, "GET", "/tokens", "")
				if st != http.StatusOK || m["totalCount"] != float64(1) {
					t.Fatalf("%s tokens: %d %v", env, st, m)
				}
			}
		})
	}
}

// printedToken returns the "id:secret" printed for env, if any.
func printedToken(out, env string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), env+" token:"); ok {
			if v := strings.TrimSpace(rest); strings.Count(v, ":") == 1 && !strings.Contains(v, " ") {
				return v
			}
		}
	}
	return ""
}

// Issue 16, item 9, on the binary's own listener: a bad %-escape in the
// path and oversized headers, which Go's server answers before routing,
// are JSON errors (R-ERR-01).
func TestServe_PreRoutingErrorsAreJSON_R_ERR_01(t *testing.T) {
	t.Setenv("PAYMENTS_SANDBOX_TOKEN", "")
	t.Setenv("PAYMENTS_PRODUCTION_TOKEN", "")
	s := startServe(t, "")
	addr := strings.TrimPrefix(s.base, "http://")
	for req, want := range map[string]struct {
		status int
		code   string
	}{
		"GET /2025-10-13/customers/%zz HTTP/1.1\r\nHost: x\r\n\r\n":                                  {400, "INVALID_INPUT"},
		"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20+8192) + "\r\n\r\n": {431, "REQUEST_HEADERS_TOO_LARGE"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.WriteString(conn, req) }()
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		err = json.NewDecoder(res.Body).Decode(&m)
		conn.Close()
		if err != nil || res.StatusCode != want.status || m["code"] != want.code || m["reason"] == "" ||
			m["message"] != m["reason"] || m["status"] != float64(want.status) {
			t.Fatalf("%.60q: %d %s %v (%v)", req, res.StatusCode, res.Header.Get("Content-Type"), m, err)
		}
	}
}
