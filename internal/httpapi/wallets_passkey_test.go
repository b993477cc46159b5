package httpapi

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"regexp"
	"testing"

	"github.com/paymentsd/paymentsd/internal/passkey/passkeytest"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

const (
	passkeyRP     = "wallet.example.com"
	passkeyOrigin = "https://wallet.example.com"
)

// wlPasskeyRP configures the platform's WebAuthn relying party.
func (e *env) wlPasskeyRP(t *testing.T) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", cobj{"embeddedWalletConfig": cobj{"passkeyRpId": passkeyRP,
		"passkeyOrigins": []string{passkeyOrigin}}}), http.StatusOK, "")
}

// regChallenge is a registration challenge as the platform's backend
// issues it (random, base64url).
func regChallenge() ([]byte, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b, base64.RawURLEncoding.EncodeToString(b)
}

// passkeyBody is the creation body of auth's registration.
func (c *walletClient) passkeyBody(auth *passkeytest.Authenticator) cobj {
	raw, enc := regChallenge()
	return cobj{"type": "PASSKEY", "accountId": c.accountID, "nickname": "iPhone Face-ID", "challenge": enc,
		"attestation": auth.Create(raw)}
}

// addPasskey registers auth on the wallet, signed with key.
func (c *walletClient) addPasskey(auth *passkeytest.Authenticator, key *ecdsa.PrivateKey) map[string]any {
	c.t.Helper()
	r := c.signed("POST", "/auth/credentials", c.passkeyBody(auth), key)
	expect(c.t, r, http.StatusCreated, "")
	return r.JSON(c.t)
}

// passkeyLogin runs the challenge (binding clientKey) and the assertion.
func (c *walletClient) passkeyLogin(cred map[string]any, auth *passkeytest.Authenticator, clientKey string) resp {
	c.t.Helper()
	r := c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", cobj{"clientPublicKey": clientKey})
	expect(c.t, r, http.StatusOK, "")
	ch := r.JSON(c.t)
	return c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/verify",
		cobj{"type": "PASSKEY", "assertion": auth.Get([]byte(ch["challenge"].(string)))},
		withHeader(signedretry.HeaderRequestID, ch["requestId"].(string)))
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// R-EWA-03, R-EWA-04, R-EWA-05, R-EWA-10, R-EWA-11, R-EWA-32: a passkey
// registered through a real WebAuthn ceremony (software authenticator,
// go-webauthn on the server); its challenge takes clientPublicKey in both
// forms and answers credentialId, a hex SHA-256 challenge, requestId and
// expiresAt; the assertion with Request-Id opens a session, without key
// material for a compressed key and with encryptedSessionSigningKey for an
// uncompressed one. The same passkey cannot be registered twice.
func TestWallets_PasskeyLogin_R_EWA_03_R_EWA_04_R_EWA_05_R_EWA_10_R_EWA_11(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		e.wlPasskeyRP(t)
		auth := passkeytest.New(passkeyRP, passkeyOrigin)
		cred := c.addPasskey(auth, key)
		if cred["type"] != "PASSKEY" || cred["credentialId"] != auth.CredentialID() || cred["nickname"] != "iPhone Face-ID" {
			t.Fatalf("credential %v", cred)
		}
		// R-EWA-32: the same credentialId again is 400 PASSKEY_CREDENTIAL_ALREADY_EXISTS.
		expect(t, c.signed("POST", "/auth/credentials", c.passkeyBody(auth), key), http.StatusBadRequest, "PASSKEY_CREDENTIAL_ALREADY_EXISTS")

		// R-EWA-03, R-EWA-04, R-EWA-05: the challenge.
		sk, _ := wallets.NewKey()
		compressed := wallets.CompressedHex(&sk.PublicKey)
		r := c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", cobj{"clientPublicKey": compressed})
		expect(t, r, http.StatusOK, "")
		ch := r.JSON(t)
		if ch["credentialId"] != auth.CredentialID() || !hex64.MatchString(ch["challenge"].(string)) || ch["requestId"] == nil || ch["expiresAt"] == nil {
			t.Fatalf("challenge %v", ch)
		}
		// R-EWA-10, R-EWA-11: the assertion with Request-Id; no key material.
		path := "/auth/credentials/" + cred["id"].(string) + "/verify"
		body := cobj{"type": "PASSKEY", "assertion": auth.Get([]byte(ch["challenge"].(string)))}
		r = c.do("POST", path, body, withHeader(signedretry.HeaderRequestID, ch["requestId"].(string)))
		expect(t, r, http.StatusOK, "")
		sess := r.JSON(t)
		if sess["publicKey"] != compressed || sess["encryptedSessionSigningKey"] != nil || sess["authMethodId"] != cred["id"] {
			t.Fatalf("session %v", sess)
		}
		expect(t, c.signed("PATCH", "/internal-accounts/"+c.accountID, cobj{"privateEnabled": true}, sk), http.StatusOK, "")
		// A used challenge is burned.
		expect(t, c.do("POST", path, body, withHeader(signedretry.HeaderRequestID, ch["requestId"].(string))),
			http.StatusUnauthorized, "REQUEST_ALREADY_COMPLETED")

		// R-EWA-03, R-EWA-11: an uncompressed key, the legacy flow.
		eph := ephemeral(t)
		r = c.passkeyLogin(cred, auth, hex.EncodeToString(eph.PublicKey().Bytes()))
		expect(t, r, http.StatusOK, "")
		legacy := r.JSON(t)
		raw, err := wallets.OpenBundle(eph, wallets.InfoLegacy, legacy["encryptedSessionSigningKey"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if lk, err := ecdsa.ParseRawPrivateKey(sk.Curve, raw); err != nil || wallets.CompressedHex(&lk.PublicKey) != legacy["publicKey"] {
			t.Fatalf("legacy key: %v", err)
		}
	})
}

// Every wrong passkey verification is refused with its code and changes
// nothing: no Request-Id (R-AUTH-15 style), an unknown one (R-EWA-34), an
// assertion over another challenge or by another key, a malformed one; and
// a challenge needs clientPublicKey. Without a configured relying party
// passkeys are refused clearly.
func TestWallets_PasskeyRefusals_R_EWA_34(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		auth := passkeytest.New(passkeyRP, passkeyOrigin)
		expect(t, c.signed("POST", "/auth/credentials", c.passkeyBody(auth), key), http.StatusBadRequest, "INVALID_INPUT")
		e.wlPasskeyRP(t)
		cred := c.addPasskey(auth, key)
		chPath := "/auth/credentials/" + cred["id"].(string) + "/challenge"
		expect(t, c.do("POST", chPath, nil), http.StatusBadRequest, "INVALID_INPUT")
		sk, _ := wallets.NewKey()
		ch := c.do("POST", chPath, cobj{"clientPublicKey": wallets.CompressedHex(&sk.PublicKey)}).JSON(t)
		rid := withHeader(signedretry.HeaderRequestID, ch["requestId"].(string))
		path := "/auth/credentials/" + cred["id"].(string) + "/verify"
		good := auth.Get([]byte(ch["challenge"].(string)))
		impostor := passkeytest.New(passkeyRP, passkeyOrigin)
		impostor.ID = auth.ID
		bad := good
		bad.Signature = "AAAA"
		before := e.snapshotWallets(t)
		cases := []struct {
			name   string
			body   cobj
			opts   []reqOpt
			status int
			code   string
		}{
			{"no Request-Id", cobj{"type": "PASSKEY", "assertion": good}, nil, 401, "REQUEST_ID_MISSING"},
			{"unknown Request-Id", cobj{"type": "PASSKEY", "assertion": good},
				[]reqOpt{withHeader(signedretry.HeaderRequestID, "Request:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b")}, 404, "REQUEST_NOT_FOUND"},
			{"other challenge", cobj{"type": "PASSKEY", "assertion": auth.Get([]byte("x"))}, []reqOpt{rid}, 401, "UNAUTHORIZED"},
			{"other key", cobj{"type": "PASSKEY", "assertion": impostor.Get([]byte(ch["challenge"].(string)))}, []reqOpt{rid}, 401, "UNAUTHORIZED"},
			{"bad signature", cobj{"type": "PASSKEY", "assertion": bad}, []reqOpt{rid}, 401, "UNAUTHORIZED"},
			{"not base64url", cobj{"type": "PASSKEY", "assertion": cobj{"credentialId": "%%", "clientDataJson": "e30",
				"authenticatorData": "AA", "signature": "AA"}}, []reqOpt{rid}, 400, "INVALID_INPUT"},
			{"no assertion", cobj{"type": "PASSKEY"}, []reqOpt{rid}, 400, "INVALID_INPUT"},
			{"OTP field", cobj{"type": "PASSKEY", "assertion": good, "encryptedOtpBundle": "{}"}, []reqOpt{rid}, 400, "INVALID_INPUT"},
		}
		for _, tc := range cases {
			r := c.do("POST", path, tc.body, tc.opts...)
			if r.Status != tc.status || r.Code(t) != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
			}
		}
		if got := e.snapshotWallets(t); got != before {
			t.Fatalf("refused verifications changed state:\n%s\n%s", before, got)
		}
		expect(t, c.do("POST", path, cobj{"type": "PASSKEY", "assertion": good}, rid), http.StatusOK, "")
		// A registration challenge registers one passkey only.
		raw, enc := regChallenge()
		other := passkeytest.New(passkeyRP, passkeyOrigin)
		body := cobj{"type": "PASSKEY", "accountId": c.accountID, "nickname": "YubiKey", "challenge": enc, "attestation": other.Create(raw)}
		expect(t, c.signed("POST", "/auth/credentials", body, key), http.StatusCreated, "")
		third := passkeytest.New(passkeyRP, passkeyOrigin)
		body["attestation"] = third.Create(raw)
		expect(t, c.signed("POST", "/auth/credentials", body, key), http.StatusBadRequest, "INVALID_INPUT")
		// An attestation for another origin does not register.
		foreign := passkeytest.New(passkeyRP, "https://evil.example.com")
		expect(t, c.signed("POST", "/auth/credentials", c.passkeyBody(foreign), key), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}
