package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
)

// R-AUTH-01, R-AUTH-02: Basic credentials; anything else is 401 UNAUTHORIZED.
func TestAuth_Credentials_R_AUTH_01_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		before := e.snapshot()
		clientID, _, _ := strings.Cut(e.sandbox, ":")
		cases := map[string]reqOpt{
			"none":           withCreds(""),
			"wrong secret":   withCreds(clientID + ":wrong"),
			"unknown id":     withCreds("nobody:secret"),
			"empty secret":   withCreds(clientID + ":"),
			"bearer scheme":  withHeader("Authorization", "Bearer "+e.sandbox),
			"garbage header": withHeader("Authorization", "Basic !!!"),
		}
		for name, opt := range cases {
			t.Run(name, func(t *testing.T) {
				r := e.do("GET", "/tokens", nil, opt)
				expect(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
				if r.Header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
				r = e.do("PATCH", "/config", `{"umaDomain":"x.example.com"}`, opt)
				expect(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
			})
		}
		expect(t, e.do("GET", "/tokens", nil), http.StatusOK, "")
		if after := e.snapshot(); after != before {
			t.Fatal("refused requests changed stored data")
		}
	})
}

// R-AUTH-04: tokens are scoped to one environment; objects of the other
// environment or another platform are 404, never leaked or changed.
func TestAuth_TenantIsolation_R_AUTH_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		other, err := platforms.Create(context.Background(), e.db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		mine := e.do("POST", "/tokens", map[string]any{"name": "mine", "permissions": []string{"VIEW"}})
		expect(t, mine, http.StatusCreated, "")
		id := mine.JSON(t)["id"].(string)
		for name, creds := range map[string]string{"production token": e.production, "other platform": other.SandboxToken} {
			t.Run(name, func(t *testing.T) {
				expect(t, e.do("GET", "/tokens/"+id, nil, withCreds(creds)), http.StatusNotFound, "TOKEN_NOT_FOUND")
				expect(t, e.do("DELETE", "/tokens/"+id, nil, withCreds(creds)), http.StatusNotFound, "TOKEN_NOT_FOUND")
				list := e.do("GET", "/tokens?limit=100", nil, withCreds(creds)).JSON(t)
				for _, x := range list["data"].([]any) {
					if x.(map[string]any)["id"] == id {
						t.Fatal("token listed to another tenant")
					}
				}
				// Each tenant's configuration is its own.
				expect(t, e.do("PATCH", "/config", `{"umaDomain":"other.example.com"}`, withCreds(creds)), http.StatusOK, "")
			})
		}
		if _, set := e.sandboxConfig(t)["umaDomain"]; set {
			t.Fatal("another tenant's PATCH changed this tenant's configuration")
		}
		expect(t, e.do("GET", "/tokens/"+id, nil), http.StatusOK, "")
	})
}

func (e *env) sandboxConfig(t *testing.T) map[string]any {
	t.Helper()
	return e.do("GET", "/config", nil).JSON(t)
}

// R-AUTH-05 (write side): a VIEW token reads but cannot change anything.
func TestAuth_ViewTokenCannotWrite_R_AUTH_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		view := e.newToken(t, "VIEW")
		expect(t, e.do("GET", "/tokens", nil, withCreds(view)), http.StatusOK, "")
		expect(t, e.do("GET", "/config", nil, withCreds(view)), http.StatusOK, "")
		before := e.snapshot()
		expect(t, e.do("POST", "/tokens", `{"name":"x","permissions":["TRANSACT"]}`, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("PATCH", "/config", `{"umaDomain":"a.example.com"}`, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		firstID := e.do("GET", "/tokens", nil).JSON(t)["data"].([]any)[0].(map[string]any)["id"].(string)
		expect(t, e.do("DELETE", "/tokens/"+firstID, nil, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		if e.snapshot() != before {
			t.Fatal("a VIEW token changed stored data")
		}
		manage := e.newToken(t, "MANAGE")
		expect(t, e.do("PATCH", "/config", `{"umaDomain":"a.example.com"}`, withCreds(manage)), http.StatusOK, "")
	})
}

// newToken creates a token with the given permissions and returns its credentials.
func (e *env) newToken(t *testing.T, perms ...string) string {
	t.Helper()
	r := e.do("POST", "/tokens", map[string]any{"name": "t", "permissions": perms})
	expect(t, r, http.StatusCreated, "")
	var tok struct{ ClientID, ClientSecret string }
	json.Unmarshal(r.Body, &tok)
	return tok.ClientID + ":" + tok.ClientSecret
}

// Deleted and expired tokens are refused at once (issue: expired and deleted
// tokens are rejected at once).
func TestAuth_DeletedAndExpiredTokens(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		creds := e.newToken(t, "VIEW")
		expect(t, e.do("GET", "/tokens", nil, withCreds(creds)), http.StatusOK, "")
		list := e.do("GET", "/tokens?limit=100", nil).JSON(t)["data"].([]any)
		id := list[len(list)-1].(map[string]any)["id"].(string)
		expect(t, e.do("DELETE", "/tokens/"+id, nil), http.StatusNoContent, "")
		expect(t, e.do("GET", "/tokens", nil, withCreds(creds)), http.StatusUnauthorized, "UNAUTHORIZED")

		exp := time.Now().Add(time.Hour).UTC()
		r := e.do("POST", "/tokens", map[string]any{"name": "soon", "permissions": []string{"VIEW"}, "expiresAt": exp})
		expect(t, r, http.StatusCreated, "")
		var tok struct{ ClientID, ClientSecret string }
		json.Unmarshal(r.Body, &tok)
		expiring := tok.ClientID + ":" + tok.ClientSecret
		expect(t, e.do("GET", "/tokens", nil, withCreds(expiring)), http.StatusOK, "")
		e.db.SetClock(func() time.Time { return exp.Add(time.Second) })
		defer e.db.SetClock(time.Now)
		expect(t, e.do("GET", "/tokens", nil, withCreds(expiring)), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, e.do("GET", "/tokens", nil), http.StatusOK, "") // a token without expiresAt never expires
	})
}

// Sandbox endpoints answer only to sandbox tokens (R-AUTH-04).
func TestAuth_SandboxOnlyRoutes_R_AUTH_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.srv.handle(route{pattern: "POST /sandbox/ping", need: 0, h: func(w http.ResponseWriter, r *http.Request) error {
			writeJSON(w, http.StatusOK, map[string]string{"env": principal(r).Tenant.Env})
			return nil
		}})
		e.undocumented["/"+Version+"/sandbox/ping"] = true
		expect(t, e.do("POST", "/sandbox/ping", nil), http.StatusOK, "")
		expect(t, e.do("POST", "/sandbox/ping", nil, withCreds(e.production)), http.StatusForbidden, "FORBIDDEN")
	})
}

// PAYMENTS_SANDBOX_TOKEN / PAYMENTS_PRODUCTION_TOKEN make exact credentials exist.
func TestEnsureToken_ExactCredentials(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		if err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvSandbox, "ci-sandbox:s3cret"); err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("GET", "/tokens", nil, withCreds("ci-sandbox:s3cret")), http.StatusOK, "")
		// Running again with a new secret resets it; the old one stops working.
		if err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvSandbox, "ci-sandbox:new"); err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("GET", "/tokens", nil, withCreds("ci-sandbox:s3cret")), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, e.do("GET", "/tokens", nil, withCreds("ci-sandbox:new")), http.StatusOK, "")
		other, _ := platforms.Create(ctx, e.db, "Other", false)
		if err := platforms.EnsureToken(ctx, e.db, other.PlatformID, store.EnvSandbox, "ci-sandbox:x"); err == nil {
			t.Fatal("a client id of another platform must not be taken over")
		}
		for _, bad := range []string{"nocolon", ":secret", "id:", "has space:x"} {
			if err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvSandbox, bad); err == nil {
				t.Errorf("%q accepted", bad)
			}
		}
	})
}
