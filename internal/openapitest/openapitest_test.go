package openapitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recorder is a testing.TB that captures failures instead of failing, so the
// tests can assert that Check does fail. Embedding the interface satisfies
// its unexported method; calling anything not overridden here panics, which
// would show Check using more of testing.TB than expected.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = true
	r.Errorf(format, args...)
}

const (
	tokenJSON = `{"id":"Token:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b47","name":"ci","permissions":["VIEW"],` +
		`"clientId":"0123456789abcdef0123456789abcdef","createdAt":"2025-10-13T09:30:00Z","updatedAt":"2025-10-13T09:30:00Z"}`
	configJSON = `{"id":"PlatformConfig:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b48",` +
		`"supportedCurrencies":[{"currencyCode":"USD","minAmount":1,"maxAmount":10000000000,"requiredCounterpartyFields":[],"enabledTransactionTypes":["INCOMING","OUTGOING"]}],` +
		`"isRegulatedFinancialInstitution":false,"feeConfigs":[],` +
		`"cardConfigs":{"pinTargetOrigin":null,"panRevealCssUrl":null,"maxSpendPerTransaction":null,"maxSpendPerDay":5000,"maxTransactionsPerDay":null},` +
		`"cardTokenization2faConfig":{},"createdAt":"2025-10-13T09:30:00Z","updatedAt":"2025-10-13T09:30:00Z"}`
	errorJSON = `{"code":"INVALID_INPUT","reason":"1 invalid field: limit must be at least 1",` +
		`"details":{"errors":[{"field":"limit","constraint":"minimum","message":"must be at least 1"}]},` +
		`"message":"1 invalid field: limit must be at least 1","status":400}`
)

func headers(contentType string) http.Header {
	h := http.Header{"X-Request-Id": {"req_0123456789abcdef01234567"}}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return h
}

func TestCheck(t *testing.T) {
	jsonH := headers("application/json")
	cases := []struct {
		name     string
		method   string
		target   string
		status   int
		header   http.Header
		body     string
		wantFail string // substring of the failure; "" means Check must pass
	}{
		{"documented token", "GET", "/2025-10-13/tokens/Token:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b47", 200, jsonH, tokenJSON, ""},
		{"documented list", "GET", "/2025-10-13/tokens?limit=5", 200, jsonH,
			`{"data":[` + tokenJSON + `],"hasMore":true,"nextCursor":"abc.def","totalCount":7}`, ""},
		{"nullable card configs", "PATCH", "/2025-10-13/config", 200, jsonH, configJSON, ""},
		{"error body", "GET", "/2025-10-13/tokens", 400, jsonH, errorJSON, ""},
		{"empty 204", "DELETE", "/2025-10-13/tokens/Token:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b47", 204, headers(""), "", ""},
		{"public at root", "GET", "/healthz", 200, jsonH, `{"status":"ok"}`, ""},
		{"html is not parsed", "GET", "/docs", 200, headers("text/html; charset=utf-8"), "<!doctype html><p>hi", ""},
		{"metrics text", "GET", "/metrics", 200, headers("text/plain; version=0.0.4; charset=utf-8"), "# HELP x\n", ""},
		{"rate limited", "GET", "/2025-10-13/config", 429,
			http.Header{"X-Request-Id": {"r1"}, "Content-Type": {"application/json"}, "Retry-After": {"2"}},
			`{"code":"RATE_LIMITED","reason":"slow down","message":"slow down","status":429}`, ""},

		{"wrong type of required field", "GET", "/2025-10-13/tokens/Token:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b47", 200, jsonH,
			strings.Replace(tokenJSON, `"createdAt":"2025-10-13T09:30:00Z"`, `"createdAt":1760347800`, 1), "createdAt"},
		{"not a date-time", "GET", "/2025-10-13/tokens/Token:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b47", 200, jsonH,
			strings.Replace(tokenJSON, `"updatedAt":"2025-10-13T09:30:00Z"`, `"updatedAt":"yesterday"`, 1), "updatedAt"},
		{"unknown permission", "GET", "/2025-10-13/tokens/Token:01992d3c-7a51-7c4e-9b8d-3f0c2a6e1b47", 200, jsonH,
			strings.Replace(tokenJSON, `"VIEW"`, `"ADMIN"`, 1), "permissions"},
		{"missing required field", "GET", "/2025-10-13/config", 200, jsonH,
			strings.Replace(configJSON, `"feeConfigs":[],`, ``, 1), "feeConfigs"},
		{"null where not nullable", "GET", "/2025-10-13/config", 200, jsonH,
			strings.Replace(configJSON, `"feeConfigs":[]`, `"feeConfigs":null`, 1), "feeConfigs"},
		{"error without reason", "GET", "/2025-10-13/tokens", 400, jsonH, `{"code":"INVALID_INPUT"}`, "reason"},
		{"undocumented status", "GET", "/2025-10-13/tokens", 418, jsonH, errorJSON, "status 418 is not documented"},
		{"undocumented path", "GET", "/2025-10-13/nothing-here", 404, jsonH, errorJSON, "no such path"},
		{"undocumented method", "PUT", "/2025-10-13/config", 405, jsonH, errorJSON, "not with this method"},
		{"public under the prefix", "GET", "/2025-10-13/healthz", 200, jsonH, `{"status":"ok"}`, "the document has it at /healthz"},
		{"API at the root", "GET", "/tokens", 200, jsonH, `{"data":[],"hasMore":false,"totalCount":0}`, "at /2025-10-13/tokens"},
		{"undocumented content type", "GET", "/2025-10-13/config", 200, headers("text/plain"), configJSON, "Content-Type"},
		{"missing request id", "GET", "/healthz", 200, http.Header{"Content-Type": {"application/json"}}, `{"status":"ok"}`, "X-Request-Id"},
		{"body on 204", "DELETE", "/2025-10-13/tokens/Token:x", 204, jsonH, `{}`, "no body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			req := httptest.NewRequest(tc.method, tc.target, nil)
			Check(rec, req, tc.status, tc.header, []byte(tc.body))
			if rec.fatal {
				t.Fatalf("Check could not run: %v", rec.errs)
			}
			got := strings.Join(rec.errs, "\n")
			switch {
			case tc.wantFail == "" && got != "":
				t.Errorf("Check failed a documented response:\n%s", got)
			case tc.wantFail != "" && got == "":
				t.Errorf("Check passed a response it should reject (want a failure mentioning %q)", tc.wantFail)
			case tc.wantFail != "" && !strings.Contains(got, tc.wantFail):
				t.Errorf("failure does not mention %q:\n%s", tc.wantFail, got)
			}
		})
	}
}

// Failures must name method, path and status, so a failing handler test
// says which response drifted.
func TestCheckMessageNamesRequest(t *testing.T) {
	rec := &recorder{TB: t}
	Check(rec, httptest.NewRequest("GET", "/2025-10-13/tokens", nil), 418, headers("application/json"), []byte(errorJSON))
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "GET /2025-10-13/tokens → 418") {
		t.Fatalf("message = %q", rec.errs)
	}
}

// Every route the server registers must be documented at the path it is
// served on, and every documented operation must be registered.
func TestRoutesAreDocumented(t *testing.T) {
	// Routes live in routes.go and in each capability's routes_*.go file.
	files, err := filepath.Glob("../httpapi/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	src := expandPathConstants(all)
	routeRE := regexp.MustCompile(`s\.handle\(route\{pattern: "([A-Z]+) (/[^"]*)"([^\n]*)`)
	matches := routeRE.FindAllStringSubmatch(string(src), -1)
	// A route written another way (over several lines, say) would be skipped
	// silently; make that loud instead.
	if calls := strings.Count(string(src), "s.handle("); calls != len(matches) || calls == 0 {
		t.Fatalf("the httpapi sources have %d s.handle calls but the pattern matched %d; update the regexp", calls, len(matches))
	}

	s := load()
	if s.err != nil {
		t.Fatal(s.err)
	}
	registered := map[string]bool{}
	for _, m := range matches {
		method, path, public := m[1], m[2], strings.Contains(m[3], "public: true")
		if !public {
			path = "/2025-10-13" + path
		}
		// Path wildcards such as {tokenId} stand for any segment.
		concrete := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
		route, _, _, err := s.findRoute(method, concrete)
		if err != nil {
			t.Errorf("%s %s is served but %v", method, path, err)
			continue
		}
		if documented := s.serverBase(route) + route.Path; documented != path {
			t.Errorf("%s %s is documented as %s; use the same parameter names", method, path, documented)
		}
		registered[method+" "+route.Path] = true
	}
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			if !registered[method+" "+path] {
				t.Errorf("%s %s is documented but no route registers it", method, path)
			}
		}
	}
}

// expandPathConstants writes routes whose pattern names a path constant
// (pattern: "GET " + cardRevealPage + "/x") as one literal, so the route
// regexp sees them: constants are `name = "/literal"` or `name = other +
// "/literal"`, declared in the httpapi sources.
func expandPathConstants(src []byte) []byte {
	consts := map[string]string{}
	declRE := regexp.MustCompile(`(?m)^\s*(?:const\s+)?([a-zA-Z]\w*)\s*=\s*(?:([a-zA-Z]\w*)\s*\+\s*)?"(/[^"]*)"\s*$`)
	for range 3 { // constants built on constants
		for _, m := range declRE.FindAllStringSubmatch(string(src), -1) {
			if m[2] == "" {
				consts[m[1]] = m[3]
			} else if base, ok := consts[m[2]]; ok {
				consts[m[1]] = base + m[3]
			}
		}
	}
	useRE := regexp.MustCompile(`pattern: "([A-Z]+) " \+ ([a-zA-Z]\w*)(?: \+ "([^"]*)")?`)
	return useRE.ReplaceAllFunc(src, func(b []byte) []byte {
		m := useRE.FindSubmatch(b)
		path, ok := consts[string(m[2])]
		if !ok {
			return b
		}
		return []byte(`pattern: "` + string(m[1]) + " " + path + string(m[3]) + `"`)
	})
}
