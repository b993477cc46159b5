package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func TestOps_HealthReadyMetricsDocs(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		expect(t, e.do("GET", "//healthz", nil, withCreds("")), http.StatusOK, "")
		if r := e.do("GET", "//readyz", nil, withCreds("")); r.Status != 200 || !strings.Contains(string(r.Body), "ready") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		e.do("GET", "/tokens", nil)
		m := e.do("GET", "//metrics", nil, withCreds(""))
		if !strings.Contains(string(m.Body), `paymentsd_http_requests_total{method="GET",route="GET /2025-10-13/tokens",status="200"}`) ||
			!strings.Contains(string(m.Body), "paymentsd_http_request_duration_seconds_bucket") {
			t.Fatalf("metrics missing request series:\n%.2000s", m.Body)
		}
		if d := e.do("GET", "//openapi.yaml", nil, withCreds("")); !strings.HasPrefix(string(d.Body), "openapi: 3") {
			t.Fatal("openapi.yaml not served")
		}
		if d := e.do("GET", "//docs", nil, withCreds("")); !strings.Contains(d.Header.Get("Content-Type"), "text/html") {
			t.Fatal("docs not served as HTML")
		}
	})
}

// /metrics shows the group committer: a transfer goes through it, so after
// one the commits, the requests they carried and the workers' busy time
// have moved, on both engines.
func TestOps_MetricsShowTheGroupCommitter(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 10_000)
		e.qtQuote(t, qtBody(src, e.qtAccountID(t, b, "USD"), "SENDING", 2_500, "immediatelyExecute", true))
		body := string(e.do("GET", "//metrics", nil, withCreds("")).Body)
		for _, name := range []string{"paymentsd_group_commits_total", "paymentsd_group_commit_requests_total",
			"paymentsd_group_commit_busy_seconds_total", "paymentsd_group_commit_workers"} {
			if v := metricValue(t, body, name); v <= 0 {
				t.Errorf("%s = %v after a transfer, want > 0", name, v)
			}
		}
		for _, name := range []string{"paymentsd_group_commit_failures_total", "paymentsd_group_commit_retries_total"} {
			if v := metricValue(t, body, name); v != 0 {
				t.Errorf("%s = %v, want 0", name, v)
			}
		}
	})
}

// metricValue is the value of an unlabelled series in a text exposition.
func metricValue(t *testing.T, body, name string) float64 {
	t.Helper()
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no %s in:\n%.3000s", name, body)
	return 0
}

// Readiness follows the database.
func TestOps_ReadyzFailsWithoutDatabase(t *testing.T) {
	db := storetest.OpenSQLite(t)
	e := newEnv(t, db, Options{})
	db.Close()
	if r := e.do("GET", "//readyz", nil, withCreds("")); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("readyz with a closed database: %d", r.Status)
	}
}

// X-Request-Id: a well-formed incoming id is echoed, a bad one replaced.
func TestOps_RequestID(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		if r := e.do("GET", "/config", nil, withHeader("X-Request-Id", "abc-123")); r.Header.Get("X-Request-Id") != "abc-123" {
			t.Fatal("incoming request id not echoed")
		}
		if r := e.do("GET", "/config", nil, withHeader("X-Request-Id", "bad id\n")); strings.Contains(r.Header.Get("X-Request-Id"), " ") {
			t.Fatal("malformed request id echoed")
		}
		if !strings.Contains(e.logs.String(), `"request_id":"abc-123"`) {
			t.Fatal("the access log carries the request id")
		}
	})
}

// Logs never carry secrets or the Authorization header.
func TestOps_LogsHoldNoSecrets(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("POST", "/tokens", `{"name":"n","permissions":["VIEW"]}`)
		secret := r.JSON(t)["clientSecret"].(string)
		_, sandboxSecret, _ := strings.Cut(e.sandbox, ":")
		e.do("GET", "/tokens", nil, withCreds("someone:wrong-password-value"))
		logs := e.logs.String()
		for _, s := range []string{secret, sandboxSecret, "wrong-password-value", "Basic "} {
			if strings.Contains(logs, s) {
				t.Fatalf("log contains %q", s)
			}
		}
	})
}

// R-ERR-20: 429 RATE_LIMITED with Retry-After, per token.
func TestOps_RateLimit_R_ERR_20(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{RateLimit: 0.5, RateBurst: 2})
		// A still clock: on a slow machine a second between the requests
		// would refill half a token and make Retry-After 1.
		still := time.Now()
		e.srv.limiter.SetClock(func() time.Time { return still })
		expect(t, e.do("GET", "/config", nil), http.StatusOK, "")
		expect(t, e.do("GET", "/config", nil), http.StatusOK, "")
		r := e.do("GET", "/config", nil)
		expect(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
		if ra := r.Header.Get("Retry-After"); ra != "2" {
			t.Fatalf("Retry-After %q", ra)
		}
		expect(t, e.do("GET", "/config", nil, withCreds(e.production)), http.StatusOK, "")
	})
}

// Issue 16, item 3: invented HTTP methods (no credentials needed) and
// unknown paths add no series to /metrics: every label value comes from a
// bounded set (known methods or OTHER; a registered pattern or unmatched).
func TestOps_MetricLabelsBounded(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite(t), Options{})
	srv := httptest.NewServer(e.srv)
	defer srv.Close()
	send := func(method, path string) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	series := func() []string {
		res, err := srv.Client().Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out []string
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.HasPrefix(line, "paymentsd_http_") {
				out = append(out, line[:strings.LastIndexByte(line, ' ')])
			}
		}
		return out
	}
	paths := []string{"/healthz", "/2025-10-13/tokens", "/2025-10-13/no/such/thing", "/nowhere"}
	for _, p := range paths { // one of each shape first: the bounded series exist
		send("INVENTED", p)
		send("GET", p)
	}
	series() // the /metrics request's own series
	before := series()
	for i := range 300 {
		send(fmt.Sprintf("M%04d", i), paths[i%len(paths)]+fmt.Sprintf("/x%d", i%2))
		send(fmt.Sprintf("X%04d", i), paths[i%len(paths)])
	}
	after := series()
	if len(after) != len(before) {
		t.Fatalf("/metrics grew from %d to %d series", len(before), len(after))
	}
	for _, s := range after {
		if strings.Contains(s, `method="M0`) || strings.Contains(s, `method="X0`) || strings.Contains(s, "/x1") {
			t.Fatalf("a client-chosen value became a label: %s", s)
		}
	}
	if !slices.ContainsFunc(after, func(s string) bool { return strings.Contains(s, `method="OTHER",route="unmatched"`) }) {
		t.Fatalf("invented methods are not counted as OTHER:\n%s", strings.Join(after, "\n"))
	}
}
