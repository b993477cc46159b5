package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/platforms"
)

// The dashboard (internal/dashboard) is served by the same server as the API,
// at /dashboard; these tests drive it as a browser would: a cookie jar, form
// posts, redirects.

type dashClient struct {
	t    *testing.T
	base string
	c    *http.Client
}

// dashServe serves the env's server over a real listener.
func (e *env) dashServe(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func newDashClient(t *testing.T, base string) *dashClient {
	jar, _ := cookiejar.New(nil)
	return &dashClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// dashSignIn signs in with creds ("clientId:secret") and returns the client.
func dashSignIn(t *testing.T, base, creds string) *dashClient {
	t.Helper()
	d := newDashClient(t, base)
	id, secret, _ := strings.Cut(creds, ":")
	status, body := d.post("/dashboard/signin", d.csrfOf("/dashboard/signin"), url.Values{"clientId": {id}, "clientSecret": {secret}})
	if status != http.StatusOK || !strings.Contains(body, "Sign out") {
		t.Fatalf("sign in: %d %s", status, body)
	}
	return d
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf loads a page and returns the CSRF token of its forms.
func (d *dashClient) csrfOf(path string) string {
	d.t.Helper()
	status, body := d.get(path)
	m := csrfField.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		d.t.Fatalf("GET %s: %d, no CSRF token: %s", path, status, body)
	}
	return m[1]
}

func (d *dashClient) get(path string) (int, string) {
	d.t.Helper()
	res, err := d.c.Get(d.base + path)
	if err != nil {
		d.t.Fatal(err)
	}
	return d.read(res)
}

// post sends a form with the CSRF token (none when csrf is "") and an
// Origin of the dashboard's own host, following the redirect.
func (d *dashClient) post(path, csrf string, form url.Values) (int, string) {
	d.t.Helper()
	return d.postFrom(path, csrf, form, d.base)
}

func (d *dashClient) postFrom(path, csrf string, form url.Values, origin string) (int, string) {
	d.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if csrf != "" {
		form.Set("csrf", csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, d.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	res, err := d.c.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	return d.read(res)
}

func (d *dashClient) read(res *http.Response) (int, string) {
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

var dashPages = []string{"/dashboard/", "/dashboard/customers", "/dashboard/accounts", "/dashboard/transactions",
	"/dashboard/cards", "/dashboard/agents", "/dashboard/approvals", "/dashboard/events", "/dashboard/webhooks",
	"/dashboard/tokens", "/dashboard/config", "/dashboard/sandbox"}

func TestDashboard_SignInPagesAndHeaders(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		base := e.dashServe(t)
		anon := newDashClient(t, base)
		// Without a session every page leads to the sign-in form.
		if status, body := anon.get("/dashboard/customers"); status != http.StatusOK || !strings.Contains(body, `name="clientSecret"`) {
			t.Fatalf("anonymous page: %d %s", status, body)
		}
		// A wrong secret is refused and opens no session.
		status, body := anon.post("/dashboard/signin", anon.csrfOf("/dashboard/signin"),
			url.Values{"clientId": {strings.Split(e.sandbox, ":")[0]}, "clientSecret": {"wrong"}})
		if status != http.StatusUnauthorized || strings.Contains(body, "Sign out") {
			t.Fatalf("wrong secret: %d", status)
		}
		d := dashSignIn(t, base, e.sandbox)
		for _, p := range dashPages {
			status, body := d.get(p)
			if status != http.StatusOK || !strings.Contains(body, "SANDBOX") {
				t.Errorf("GET %s: %d (sandbox banner: %v)", p, status, strings.Contains(body, "SANDBOX"))
			}
		}
		res, err := d.c.Get(base + "/dashboard/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		for k, want := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store",
			"X-Content-Type-Options": "nosniff"} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("CSP %q", csp)
		}
		// A production token's dashboard says so.
		p := dashSignIn(t, base, e.production)
		if _, body := p.get("/dashboard/"); !strings.Contains(body, "PRODUCTION") {
			t.Error("production banner missing")
		}
		if status, _ := p.get("/dashboard/sandbox"); status != http.StatusForbidden {
			t.Errorf("sandbox tools for a production token: %d", status)
		}
	})
}

func TestDashboard_SessionCookieFlags(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		base := e.dashServe(t)
		d := newDashClient(t, base)
		csrf := d.csrfOf("/dashboard/signin")
		id, secret, _ := strings.Cut(e.sandbox, ":")
		form := url.Values{"csrf": {csrf}, "clientId": {id}, "clientSecret": {secret}}
		req, _ := http.NewRequest(http.MethodPost, base+"/dashboard/signin", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		d.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, err := d.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		var found bool
		for _, c := range res.Cookies() {
			if c.Name == "pd_session" && c.Value != "" {
				found = true
				if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/dashboard" {
					t.Errorf("session cookie %+v", c)
				}
				if c.Secure {
					t.Error("Secure set over plain http") // set when served over TLS
				}
			}
		}
		if !found {
			t.Fatalf("no session cookie: %d %v", res.StatusCode, res.Header)
		}
	})
}

func TestDashboard_FormsNeedTheCSRFToken(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		d := dashSignIn(t, e.dashServe(t), e.sandbox)
		tokens := func() int { return int(e.do("GET", "/tokens", nil).JSON(t)["totalCount"].(float64)) }
		before := tokens()
		form := url.Values{"name": {"made here"}, "permissions": {"VIEW"}}
		if status, _ := d.post("/dashboard/tokens", "", form); status != http.StatusForbidden {
			t.Errorf("without a CSRF token: %d", status)
		}
		if status, _ := d.post("/dashboard/tokens", "not-the-token", form); status != http.StatusForbidden {
			t.Errorf("with a wrong CSRF token: %d", status)
		}
		csrf := d.csrfOf("/dashboard/tokens")
		if status, _ := d.postFrom("/dashboard/tokens", csrf, form, "https://evil.example"); status != http.StatusForbidden {
			t.Errorf("from another origin: %d", status)
		}
		if got := tokens(); got != before {
			t.Fatalf("refused forms created tokens: %d → %d", before, got)
		}
		// The sign-in form needs its own token too.
		anon := newDashClient(t, d.base)
		id, secret, _ := strings.Cut(e.sandbox, ":")
		if status, _ := anon.post("/dashboard/signin", "", url.Values{"clientId": {id}, "clientSecret": {secret}}); status != http.StatusForbidden {
			t.Errorf("sign-in without its CSRF token: %d", status)
		}
		// With the token the form acts, once per form id, and shows the secret once.
		form.Set("formId", "form-1")
		status, body := d.post("/dashboard/tokens", csrf, form)
		if status != http.StatusOK || !strings.Contains(body, "shown once") || !strings.Contains(body, `id="client-secret"`) {
			t.Fatalf("create token: %d %s", status, body)
		}
		if status, _ := d.post("/dashboard/tokens", csrf, form); status != http.StatusOK {
			t.Fatalf("resent form: %d", status)
		}
		if got := tokens(); got != before+1 {
			t.Fatalf("tokens %d → %d, want one more (the form id is the Idempotency-Key)", before, got)
		}
		if _, list := d.get("/dashboard/tokens"); strings.Contains(list, "client-secret") {
			t.Error("the token list shows a secret")
		}
	})
}

func TestDashboard_PermissionsAreTheAPIs(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		base := e.dashServe(t)
		view := e.do("POST", "/tokens", map[string]any{"name": "viewer", "permissions": []string{"VIEW"}}).JSON(t)
		other := e.do("POST", "/tokens", map[string]any{"name": "victim", "permissions": []string{"VIEW"}}).JSON(t)
		d := dashSignIn(t, base, view["clientId"].(string)+":"+view["clientSecret"].(string))
		for _, p := range dashPages[:len(dashPages)-1] { // all but the sandbox tools
			if status, _ := d.get(p); status != http.StatusOK {
				t.Errorf("VIEW token GET %s: %d", p, status)
			}
		}
		_, page := d.get("/dashboard/tokens")
		if strings.Contains(page, "Create a token") || strings.Contains(page, "/revoke") {
			t.Error("a VIEW token is offered actions")
		}
		// Posting the action anyway reaches the API route, which refuses it.
		csrf := csrfField.FindStringSubmatch(page)[1]
		status, body := d.post("/dashboard/tokens/"+other["id"].(string)+"/revoke", csrf, nil)
		if status != http.StatusForbidden || !strings.Contains(body, "FORBIDDEN") {
			t.Fatalf("VIEW revoke: %d %s", status, body)
		}
		expect(t, e.do("GET", "/tokens/"+other["id"].(string), nil), http.StatusOK, "")
		if status, _ := d.post("/dashboard/webhooks/rotate", csrf, nil); status != http.StatusForbidden {
			t.Errorf("VIEW rotate: %d", status)
		}
	})
}

func TestDashboard_TenantsNeverMix(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		base := e.dashServe(t)
		other, err := platforms.Create(context.Background(), e.db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		e.acSupport(t, "USD")
		theirs := e.acCustomer(t, withCreds(other.SandboxToken))
		prod := e.acCustomer(t, withCreds(e.production))
		mine := e.acCustomer(t)
		d := dashSignIn(t, base, e.sandbox)
		_, list := d.get("/dashboard/customers")
		if !strings.Contains(list, mine) || strings.Contains(list, theirs) || strings.Contains(list, prod) {
			t.Fatalf("customer list mixes tenants (mine %v, other platform %v, production %v)",
				strings.Contains(list, mine), strings.Contains(list, theirs), strings.Contains(list, prod))
		}
		for _, id := range []string{theirs, prod} {
			if status, _ := d.get("/dashboard/customers/" + id); status != http.StatusNotFound {
				t.Errorf("another tenant's customer %s: %d", id, status)
			}
			if status, _ := d.get("/dashboard/customers?q=" + url.QueryEscape(id)); status != http.StatusNotFound {
				t.Errorf("search for another tenant's customer: %d", status)
			}
		}
	})
}

func TestDashboard_SessionsEnd(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.driveByHand() // the test moves the store clock
		base := e.dashServe(t)
		tok := e.do("POST", "/tokens", map[string]any{"name": "short", "permissions": []string{"VIEW"}}).JSON(t)
		creds := tok["clientId"].(string) + ":" + tok["clientSecret"].(string)
		signedIn := func(d *dashClient) bool {
			_, body := d.get("/dashboard/")
			return strings.Contains(body, "Sign out")
		}
		// Revoking the token ends its sessions at once.
		d := dashSignIn(t, base, creds)
		expect(t, e.do("DELETE", "/tokens/"+tok["id"].(string), nil), http.StatusNoContent, "")
		if signedIn(d) {
			t.Error("session outlived its revoked token")
		}
		// Signing out ends the session.
		d = dashSignIn(t, base, e.sandbox)
		d.post("/dashboard/signout", d.csrfOf("/dashboard/"), nil)
		if signedIn(d) {
			t.Error("session outlived sign-out")
		}
		// Idle for longer than the timeout: signed out.
		d = dashSignIn(t, base, e.sandbox)
		start := time.Now()
		e.db.SetClock(func() time.Time { return start.Add(31 * time.Minute) })
		t.Cleanup(func() { e.db.SetClock(time.Now) })
		if signedIn(d) {
			t.Error("session outlived the idle timeout")
		}
	})
}
