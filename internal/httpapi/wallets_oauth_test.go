package httpapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

const oauthAud = "acme-ios-app"

// idToken has the sandbox issuer sign an ID token, as the provider does
// when the user signs in (iat now unless issuedAt is given).
func (c *walletClient) idToken(sub, aud, nonce string, issuedAt *time.Time) string {
	c.t.Helper()
	body := cobj{"sub": sub, "aud": aud, "email": sub + "@example.com"}
	if nonce != "" {
		body["nonce"] = nonce
	}
	if issuedAt != nil {
		body["issuedAt"] = issuedAt.UTC().Format(time.RFC3339)
	}
	r := c.do("POST", "/sandbox/oidc/tokens", body)
	expect(c.t, r, http.StatusOK, "")
	return r.JSON(c.t)["idToken"].(string)
}

// addOAuth adds an OAUTH credential for sub, signed with key (a session of
// a verified credential on the wallet).
func (c *walletClient) addOAuth(sub string, key *ecdsa.PrivateKey) map[string]any {
	c.t.Helper()
	r := c.signed("POST", "/auth/credentials", cobj{"type": "OAUTH", "accountId": c.accountID,
		"oidcToken": c.idToken(sub, oauthAud, "", nil)}, key)
	expect(c.t, r, http.StatusCreated, "")
	return r.JSON(c.t)
}

// oauthLogin verifies an OAUTH credential with a fresh token whose nonce
// binds clientKey (R-SBX-17), and returns the answer.
func (c *walletClient) oauthLogin(cred map[string]any, sub, clientKey string) resp {
	c.t.Helper()
	return c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/verify", cobj{"type": "OAUTH",
		"oidcToken": c.idToken(sub, oauthAud, wallets.SandboxNonce(clientKey), nil), "clientPublicKey": clientKey})
}

// R-EWA-08, R-EWA-11, R-SBX-17, R-EWA-32: an OAUTH credential, added by
// signed retry with a token of the sandbox issuer, opens a session in one
// call with a fresh token whose nonce is sha256(clientPublicKey): with a
// compressed key no key material comes back, with an uncompressed one the
// session key comes back sealed to it (deprecated legacy flow).
func TestWallets_OAuthLogin_R_EWA_08_R_EWA_11_R_SBX_17(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		cred := c.addOAuth("user-1", key)
		if cred["type"] != "OAUTH" || cred["nickname"] != "user-1@example.com" || cred["verified"] != false {
			t.Fatalf("credential %v", cred)
		}
		// R-EWA-08, R-EWA-11: compressed key, no key material.
		sk, _ := wallets.NewKey()
		r := c.oauthLogin(cred, "user-1", wallets.CompressedHex(&sk.PublicKey))
		expect(t, r, http.StatusOK, "")
		sess := r.JSON(t)
		exp, _ := time.Parse(time.RFC3339Nano, sess["expiresAt"].(string))
		if sess["publicKey"] != wallets.CompressedHex(&sk.PublicKey) || sess["encryptedSessionSigningKey"] != nil || !exp.After(time.Now()) {
			t.Fatalf("session %v", sess)
		}
		// The session's key signs wallet operations.
		expect(t, c.signed("PATCH", "/internal-accounts/"+c.accountID, cobj{"privateEnabled": true}, sk), http.StatusOK, "")
		// R-EWA-11: uncompressed key, the session key comes back sealed to it.
		eph := ephemeral(t)
		r = c.oauthLogin(cred, "user-1", hex.EncodeToString(eph.PublicKey().Bytes()))
		expect(t, r, http.StatusOK, "")
		legacy := r.JSON(t)
		raw, err := wallets.OpenBundle(eph, wallets.InfoLegacy, legacy["encryptedSessionSigningKey"].(string))
		if err != nil {
			t.Fatalf("encryptedSessionSigningKey: %v", err)
		}
		lk, err := ecdsa.ParseRawPrivateKey(sk.Curve, raw)
		if err != nil || wallets.CompressedHex(&lk.PublicKey) != legacy["publicKey"] {
			t.Fatalf("legacy session key does not match the session: %v", err)
		}
		// R-EWA-32: the kinds are listed with their wallet.
		list := c.do("GET", "/auth/credentials?accountId="+c.accountID, nil).JSON(t)["data"].([]any)
		if len(list) != 2 || list[1].(map[string]any)["verified"] != true {
			t.Fatalf("credentials %v", list)
		}
	})
}

// R-EWA-09, R-SBX-17, R-EWA-02: a token issued 60 s or more ago, or whose
// iss, aud or sub is not the credential's, or whose nonce is not
// sha256(clientPublicKey), or whose signature does not verify, is 401
// UNAUTHORIZED; a token that is not a JWT, or of an issuer the platform
// does not accept, is 400 INVALID_INPUT; none changes anything. OAUTH
// credentials have no challenge step.
func TestWallets_OAuthRefusals_R_EWA_09_R_SBX_17_R_EWA_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		cred := c.addOAuth("user-1", key)
		path := "/auth/credentials/" + cred["id"].(string) + "/verify"
		sk, _ := wallets.NewKey()
		ck := wallets.CompressedHex(&sk.PublicKey)
		nonce := wallets.SandboxNonce(ck)
		old := e.db.Now().Add(-61 * time.Second)
		good := c.idToken("user-1", oauthAud, nonce, nil)
		other, err := platforms.Create(context.Background(), e.db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		r := c.do("POST", "/sandbox/oidc/tokens", cobj{"sub": "user-1", "aud": oauthAud, "nonce": nonce}, withCreds(other.SandboxToken))
		expect(t, r, http.StatusOK, "")
		otherPlatform := r.JSON(t)["idToken"].(string)
		cases := map[string]struct {
			token  string
			status int
			code   string
		}{
			// R-EWA-09
			"iat 61 s old": {c.idToken("user-1", oauthAud, nonce, &old), 401, "UNAUTHORIZED"},
			"another sub":  {c.idToken("user-2", oauthAud, nonce, nil), 401, "UNAUTHORIZED"},
			"another aud":  {c.idToken("user-1", "other-app", nonce, nil), 401, "UNAUTHORIZED"},
			// R-SBX-17
			"another nonce": {c.idToken("user-1", oauthAud, wallets.SandboxNonce(ck+"00"), nil), 401, "UNAUTHORIZED"},
			"no nonce":      {c.idToken("user-1", oauthAud, "", nil), 401, "UNAUTHORIZED"},
			"bad signature": {good[:len(good)-4] + flip(good[len(good)-4:]), 401, "UNAUTHORIZED"},
			"foreign key":   {foreignToken(t, good), 401, "UNAUTHORIZED"},
			"not a JWT":     {"not-a-token", 400, "INVALID_INPUT"},
			// The sandbox issuer signs for the platform that asked only.
			"other platform": {otherPlatform, 401, "UNAUTHORIZED"},
			"unknown iss":    {withIssuer(good, "https://accounts.example.com"), 400, "INVALID_INPUT"},
		}
		before := e.snapshotWallets(t)
		for name, tc := range cases {
			r := c.do("POST", path, cobj{"type": "OAUTH", "oidcToken": tc.token, "clientPublicKey": ck})
			if r.Status != tc.status || r.Code(t) != tc.code {
				t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, tc.status, tc.code)
			}
		}
		// Fields of other types, and missing ones, are refused by name.
		expect(t, c.do("POST", path, cobj{"type": "OAUTH", "oidcToken": good}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, c.do("POST", path, cobj{"type": "OAUTH", "oidcToken": good, "clientPublicKey": "05ab"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, c.do("POST", path, cobj{"type": "EMAIL_OTP", "oidcToken": good, "clientPublicKey": ck}), http.StatusBadRequest, "INVALID_INPUT")
		// R-EWA-02: no challenge step.
		expect(t, c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", nil), http.StatusBadRequest, "INVALID_INPUT")
		if got := e.snapshotWallets(t); got != before {
			t.Fatalf("refused verifications changed state:\n%s\n%s", before, got)
		}
		// The good token still opens a session.
		expect(t, c.do("POST", path, cobj{"type": "OAUTH", "oidcToken": good, "clientPublicKey": ck}), http.StatusOK, "")
		// A token opens one session: its replay is refused.
		expect(t, c.do("POST", path, cobj{"type": "OAUTH", "oidcToken": good, "clientPublicKey": ck}), http.StatusUnauthorized, "UNAUTHORIZED")
		// Creation takes fresh, accepted tokens only; one identity, one credential.
		add := func(tok string) resp {
			return c.signed("POST", "/auth/credentials", cobj{"type": "OAUTH", "accountId": c.accountID, "oidcToken": tok}, key)
		}
		for name, tok := range map[string]string{"stale": c.idToken("user-9", oauthAud, "", &old), "unknown iss": withIssuer(good, "https://x.example")} {
			r := c.do("POST", "/auth/credentials", cobj{"type": "OAUTH", "accountId": c.accountID, "oidcToken": tok})
			if r.Status != 401 && r.Status != 400 {
				t.Errorf("create with %s token: %d %s", name, r.Status, r.Body)
			}
		}
		expect(t, add(c.idToken("user-1", oauthAud, "", nil)), http.StatusConflict, "CONFLICT")
		expect(t, c.do("POST", "/auth/credentials", cobj{"type": "OAUTH", "accountId": c.accountID}), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// Issuers are the platform's: with embeddedWalletConfig.oauthIssuers set,
// a token's aud must be one of the issuer's client ids. Production accepts
// only configured issuers (never the sandbox one); a configured issuer's
// discovery document and keys are fetched from it over HTTPS.
func TestWallets_OAuthIssuersConfigured(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		iss := e.srv.walletService().OIDC.Sandbox.URL
		r := e.do("PATCH", "/config", cobj{"embeddedWalletConfig": cobj{"oauthIssuers": []cobj{{"issuer": iss, "clientIds": []string{"web-app"}}}}})
		expect(t, r, http.StatusOK, "")
		body := func(aud string) cobj {
			return cobj{"type": "OAUTH", "accountId": c.accountID, "oidcToken": c.idToken("user-1", aud, "", nil)}
		}
		expect(t, c.do("POST", "/auth/credentials", body(oauthAud)), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, c.signed("POST", "/auth/credentials", body("web-app"), key), http.StatusCreated, "")
		// Bad configurations are refused by field.
		for _, bad := range []any{
			[]cobj{{"issuer": "not a url", "clientIds": []string{"a"}}},
			[]cobj{{"issuer": iss, "clientIds": []string{}}},
			[]cobj{{"issuer": iss, "clientIds": []string{"a"}}, {"issuer": iss, "clientIds": []string{"b"}}},
		} {
			expect(t, e.do("PATCH", "/config", cobj{"embeddedWalletConfig": cobj{"oauthIssuers": bad}}), http.StatusBadRequest, "INVALID_INPUT")
		}

		// Production: a real issuer over HTTPS, configured by the platform.
		idp := &wallets.SandboxIssuer{Secret: func() ([]byte, error) { return []byte(strings.Repeat("k", 32)), nil }}
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var v any = idp.Discovery()
			if r.URL.Path == "/jwks" {
				v, _ = idp.JWKS()
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}))
		defer ts.Close()
		idp.URL = ts.URL
		e.srv.walletService().OIDC.Client = ts.Client()
		prod := withCreds(e.production)
		e.wlEnableIn(t, prod)
		pc := &walletClient{e: e, t: t, accountID: e.wlProdWallet(t, prod)}
		tok, _ := idp.Sign(wallets.TokenRequest{Subject: "p-1", Audience: "prod-app", IssuedAt: e.db.Now(), Lifetime: time.Hour})
		create := cobj{"type": "OAUTH", "accountId": pc.accountID, "oidcToken": tok}
		expect(t, pc.do("POST", "/auth/credentials", create, prod), http.StatusBadRequest, "INVALID_INPUT")
		sandboxTok := c.idToken("p-1", "prod-app", "", nil)
		expect(t, pc.do("POST", "/auth/credentials", cobj{"type": "OAUTH", "accountId": pc.accountID, "oidcToken": sandboxTok}, prod),
			http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/config", cobj{"embeddedWalletConfig": cobj{"oauthIssuers": []cobj{{"issuer": ts.URL, "clientIds": []string{"prod-app"}}}}}, prod),
			http.StatusOK, "")
		r = pc.do("POST", "/auth/credentials", create, prod)
		expect(t, r, http.StatusCreated, "")
		cred := r.JSON(t)
		// Production checks no nonce; iss, aud, sub and freshness still hold.
		sk, _ := wallets.NewKey()
		tok2, _ := idp.Sign(wallets.TokenRequest{Subject: "p-1", Audience: "prod-app", IssuedAt: e.db.Now(), Lifetime: time.Hour})
		r = pc.do("POST", "/auth/credentials/"+cred["id"].(string)+"/verify", cobj{"type": "OAUTH", "oidcToken": tok2,
			"clientPublicKey": wallets.CompressedHex(&sk.PublicKey)}, prod)
		expect(t, r, http.StatusOK, "")
	})
}

// flip changes a base64url tail so the signature no longer verifies.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// withIssuer re-encodes a token's payload with another iss (signature left
// as it was).
func withIssuer(token, iss string) string {
	parts := strings.Split(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(raw, &claims)
	claims["iss"] = iss
	b, _ := json.Marshal(claims)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}

// foreignToken signs the claims of token with a key that is not the
// issuer's (same kid would not help: the signature does not verify).
func foreignToken(t *testing.T, token string) string {
	t.Helper()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	var claims struct {
		Iss, Sub, Aud, Nonce string
		Iat                  int64
	}
	_ = json.Unmarshal(raw, &claims)
	other := &wallets.SandboxIssuer{URL: claims.Iss, Secret: func() ([]byte, error) { return secret, nil }}
	tok, err := other.Sign(wallets.TokenRequest{Subject: claims.Sub, Audience: claims.Aud, Nonce: claims.Nonce,
		IssuedAt: time.Unix(claims.Iat, 0), Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// wlEnableIn turns embedded wallets on in the environment of opt's token.
func (e *env) wlEnableIn(t *testing.T, opt reqOpt) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", cobj{"embeddedWalletConfig": cobj{"appName": "Acme Wallet"}}, opt), http.StatusOK, "")
}

// wlProdWallet creates a customer with opt's token and returns its wallet.
func (e *env) wlProdWallet(t *testing.T, opt reqOpt) string {
	t.Helper()
	cid := e.acCustomer(t, opt)
	list := e.acList(t, acCustomers, "customerId="+cid+"&type=EMBEDDED_WALLET", opt)
	if len(list) != 1 {
		t.Fatalf("%d production wallets", len(list))
	}
	return list[0]["id"].(string)
}
