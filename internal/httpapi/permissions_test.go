package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/auth"
)

// The permission model as the tests read it, stated independently of
// auth's table: what each permission may call.
var permissionAllows = map[string]map[auth.Need]bool{
	auth.View:     {auth.NeedView: true},
	auth.Manage:   {auth.NeedView: true, auth.NeedWrite: true},
	auth.Transact: {auth.NeedView: true, auth.NeedWrite: true, auth.NeedMoney: true},
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// rawCall sends a request straight to the server, without the OpenAPI check
// of env.do: the allowed calls below use made-up ids, whose answers are not
// this test's concern.
func (e *env) rawCall(method, path, creds string) (int, string) {
	req := httptest.NewRequest(method, "/"+Version+path, nil)
	withCreds(creds)(req)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	var body struct{ Code string }
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	return rec.Code, body.Code
}

// Every registered route (the server's own table, so a new route is covered
// without touching this test) against every permission, no credentials and
// the other environment's token.
func TestPermissions_EveryRouteEveryPermission_R_AUTH_02_R_ERR_11(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		creds := map[string]string{}
		for perm := range permissionAllows {
			creds[perm] = e.newToken(t, perm)
		}
		checked := 0
		for _, rt := range e.srv.table {
			// Agent routes take a bearer token and the redeem route none:
			// agents_auth_test.go walks them.
			if rt.public || rt.agent || rt.open {
				continue
			}
			method, pattern, _ := strings.Cut(rt.pattern, " ")
			path := pathParam.ReplaceAllString(pattern, "Unknown:permissions-test")
			t.Run(rt.pattern, func(t *testing.T) {
				// R-AUTH-02, R-ERR-11: no credentials is 401 UNAUTHORIZED on
				// every route; a token without the permission, 403 FORBIDDEN.
				if st, code := e.rawCall(method, path, ""); st != http.StatusUnauthorized || code != "UNAUTHORIZED" {
					t.Errorf("no credentials: %d %s", st, code)
				}
				for perm, c := range creds {
					st, code := e.rawCall(method, path, c)
					refused := st == http.StatusForbidden && code == "FORBIDDEN"
					if want := permissionAllows[perm][rt.need]; refused == want {
						t.Errorf("%s token: %d %s, allowed=%v", perm, st, code, want)
					}
				}
				// R-AUTH-04: /sandbox/* answers only to sandbox tokens.
				if strings.HasPrefix(pattern, "/sandbox/") {
					if st, code := e.rawCall(method, path, e.production); st != http.StatusForbidden || code != "FORBIDDEN" {
						t.Errorf("production token on a sandbox route: %d %s", st, code)
					}
				}
			})
			checked++
		}
		if checked < 50 {
			t.Fatalf("only %d routes in the table", checked)
		}
	})
}

// R-AUTH-05: the quote endpoints move money and need TRANSACT; so do the
// other endpoints that move money.
func TestPermissions_MoneyRoutesNeedTransact_R_AUTH_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		needs := map[string]auth.Need{}
		for _, rt := range e.srv.table {
			needs[rt.pattern] = rt.need
		}
		for _, p := range []string{"POST /quotes", "POST /quotes/{quoteId}/execute", "POST /transfer-in", "POST /transfer-out",
			"POST /sandbox/send", "POST /sandbox/internal-accounts/{accountId}/fund", "POST /transactions/{transactionId}/approve"} {
			if n, ok := needs[p]; !ok || n != auth.NeedMoney {
				t.Errorf("%s: need %v (registered %v), want NeedMoney", p, n, ok)
			}
		}
		view := e.newToken(t, auth.View)
		for _, p := range []string{"/quotes", "/quotes/Quote:x/execute"} {
			expect(t, e.do("POST", p, `{}`, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		}
	})
}

// A token grants and revokes only permissions it holds: a MANAGE token can
// neither create nor delete a TRANSACT token (issue 16: it could, and the
// token it made then moved money).
func TestPermissions_TokensGrantOnlyWhatTheyHold_R_TOKCFG_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		all := []string{auth.View, auth.Manage, auth.Transact}
		for _, caller := range all {
			creds := e.newToken(t, caller)
			for _, target := range all {
				allowed := permissionAllows[caller][permissionNeed(target)] && caller != auth.View
				before := e.snapshot()
				r := e.do("POST", "/tokens", map[string]any{"name": "made", "permissions": []string{target}}, withCreds(creds))
				if allowed {
					expect(t, r, http.StatusCreated, "")
				} else {
					expect(t, r, http.StatusForbidden, "FORBIDDEN")
					if e.snapshot() != before {
						t.Fatalf("%s creating %s: refused, yet something changed", caller, target)
					}
				}
				// Revoking: a token of target made by the platform's TRANSACT token.
				victim := e.do("POST", "/tokens", map[string]any{"name": "victim", "permissions": []string{target}}).JSON(t)["id"].(string)
				r = e.do("DELETE", "/tokens/"+victim, nil, withCreds(creds))
				if allowed {
					expect(t, r, http.StatusNoContent, "")
				} else {
					expect(t, r, http.StatusForbidden, "FORBIDDEN")
					expect(t, e.do("GET", "/tokens/"+victim, nil), http.StatusOK, "")
				}
			}
		}
		// R-TOKCFG-04: an unknown token is 404 TOKEN_NOT_FOUND, to any
		// caller allowed to delete tokens (the permission check reads the
		// token first and must not turn this into 403).
		for _, caller := range []string{auth.Manage, auth.Transact} {
			c := e.newToken(t, caller)
			expect(t, e.do("DELETE", "/tokens/Token:00000000-0000-0000-0000-000000000000", nil, withCreds(c)),
				http.StatusNotFound, "TOKEN_NOT_FOUND")
			expect(t, e.do("GET", "/tokens/Token:00000000-0000-0000-0000-000000000000", nil, withCreds(c)),
				http.StatusNotFound, "TOKEN_NOT_FOUND")
		}
		// A mixed request needs every permission it names.
		manage := e.newToken(t, auth.Manage)
		expect(t, e.do("POST", "/tokens", `{"name":"mixed","permissions":["VIEW","TRANSACT"]}`, withCreds(manage)),
			http.StatusForbidden, "FORBIDDEN")
	})
}

func permissionNeed(perm string) auth.Need {
	switch perm {
	case auth.Transact:
		return auth.NeedMoney
	case auth.Manage:
		return auth.NeedWrite
	}
	return auth.NeedView
}
