package wallets

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

func testIssuer(t *testing.T) (*SandboxIssuer, *OIDC) {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	iss := &SandboxIssuer{Secret: func() ([]byte, error) { return secret, nil }}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/jwks" {
			set, _ := iss.JWKS()
			_, _ = w.Write(mustJSON(set))
			return
		}
		_, _ = w.Write(mustJSON(iss.Discovery()))
	}))
	t.Cleanup(ts.Close)
	iss.URL, iss.Transport = ts.URL, http.DefaultTransport
	return iss, &OIDC{Sandbox: iss}
}

// R-EWA-09: the token's iat must be less than 60 s old (and not in the
// future); signature, issuer and audience go through go-oidc.
func TestOIDCVerify_R_EWA_09(t *testing.T) {
	iss, o := testIssuer(t)
	sandbox := store.Tenant{PlatformID: "p", Env: store.EnvSandbox}
	now := time.Now().Truncate(time.Second)
	sign := func(aud string, iat time.Time) string {
		tok, err := iss.Sign(TokenRequest{Subject: "s", Audience: aud, Nonce: "n", IssuedAt: iat, Lifetime: time.Hour, Platform: "p"})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	id, err := o.verify(context.Background(), sandbox, nil, sign("app", now.Add(-59*time.Second)), now, true)
	if err != nil || id.Issuer != iss.URL || id.Audience != "app" || id.Subject != "s" || id.nonce != "n" {
		t.Fatalf("verify: %+v %v", id, err)
	}
	for name, tok := range map[string]string{"60 s old": sign("app", now.Add(-60*time.Second)),
		"future": sign("app", now.Add(time.Minute))} {
		if _, err := o.verify(context.Background(), sandbox, nil, tok, now, true); code(err) != apierr.CodeUnauthorized {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Not fresh (a signed retry's second step): age is not checked again.
	if _, err := o.verify(context.Background(), sandbox, nil, sign("app", now.Add(-10*time.Minute)), now, false); err != nil {
		t.Errorf("retry: %v", err)
	}
	// Configured client ids bind aud; production never takes the sandbox issuer.
	cfg := &platformconfig.EmbeddedWalletConfig{OAuthIssuers: []platformconfig.OAuthIssuer{{Issuer: iss.URL, ClientIDs: []string{"web"}}}}
	if _, err := o.verify(context.Background(), sandbox, cfg, sign("app", now), now, true); code(err) != apierr.CodeUnauthorized {
		t.Errorf("aud outside client ids: %v", err)
	}
	prod := store.Tenant{PlatformID: "p", Env: store.EnvProduction}
	if _, err := o.verify(context.Background(), prod, nil, sign("app", now), now, true); code(err) != apierr.CodeInvalidInput {
		t.Errorf("production, sandbox issuer: %v", err)
	}
	if _, err := o.verify(context.Background(), prod, cfg, sign("web", now), now, true); code(err) != apierr.CodeInvalidInput {
		t.Errorf("production, sandbox issuer configured: %v", err)
	}
	// A real issuer configured in production is fetched and verified.
	if _, err := (&OIDC{}).verify(context.Background(), prod, cfg, sign("web", now), now, true); err != nil {
		t.Errorf("production, configured issuer: %v", err)
	}
	// The sandbox issuer's tokens are bound to the platform that asked.
	other := store.Tenant{PlatformID: "q", Env: store.EnvSandbox}
	if _, err := o.verify(context.Background(), other, nil, sign("app", now), now, true); code(err) != apierr.CodeUnauthorized {
		t.Errorf("another platform's sandbox token: %v", err)
	}
}

func code(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestPeekIssuer(t *testing.T) {
	for _, bad := range []string{"", "a.b", "a.b.c", "x.eyJpc3MiOjF9.y", "x.eyJ9.y", "x.e30.y", strings.Repeat("a", maxTokenBytes+1)} {
		if _, err := PeekIssuer(bad); err == nil {
			t.Errorf("%.20q accepted", bad)
		}
	}
	if iss, err := PeekIssuer("x.eyJpc3MiOiJodHRwczovL2EifQ.y"); err != nil || iss != "https://a" {
		t.Errorf("PeekIssuer: %q %v", iss, err)
	}
}

// FuzzPeekIssuer: any input is an issuer or an error, never a panic; an
// accepted token has three non-empty parts.
func FuzzPeekIssuer(f *testing.F) {
	f.Add("x.eyJpc3MiOiJodHRwczovL2EifQ.y")
	f.Add("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiIifQ.sig")
	f.Add("..")
	f.Fuzz(func(t *testing.T, s string) {
		iss, err := PeekIssuer(s)
		if err == nil && (iss == "" || strings.Count(s, ".") != 2) {
			t.Fatalf("accepted %q as %q", s, iss)
		}
	})
}

// R-SBX-17: the documented example of docs/wallet-signatures.md.
func TestSandboxNonce_R_SBX_17(t *testing.T) {
	if got := SandboxNonce("02f45f2a22c908b9ce09a7150e514afd24627c401c38a4afc164e1ea783adaaa31"); got != "24afbb45e88967cf181405d0804cfa7c998c8437b5c601e5d1f477e3303bceb7" {
		t.Fatal(got)
	}
}
