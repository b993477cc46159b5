package httpapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// R-EWA-15, R-EWA-16: refresh is a signed retry with the current session's
// key; it answers a new session with a later expiresAt, and the old session
// can be refreshed no more. Another active session's key cannot refresh it.
func TestWallets_SessionRefresh_R_EWA_15_R_EWA_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		move := e.acClock(t, time.Now())
		c, cred, sess, key := e.wlLoggedIn(t)
		move(time.Now().Add(time.Minute))
		// A second session of the same credential is not the current one.
		cred2 := c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", nil).JSON(t)
		_, key2 := c.login(cred2, "000000")
		path := "/auth/sessions/" + sess["id"].(string) + "/refresh"
		next, _ := wallets.NewKey()
		body := cobj{"clientPublicKey": wallets.CompressedHex(&next.PublicKey)}
		expect(t, c.signed("POST", path, body, key2), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		r := c.signed("POST", path, body, key)
		expect(t, r, http.StatusOK, "")
		fresh := r.JSON(t)
		if fresh["id"] == sess["id"] || fresh["publicKey"] != wallets.CompressedHex(&next.PublicKey) {
			t.Fatalf("refresh answered %v", fresh)
		}
		old, _ := time.Parse(time.RFC3339Nano, sess["expiresAt"].(string))
		neu, _ := time.Parse(time.RFC3339Nano, fresh["expiresAt"].(string))
		if !neu.After(old) {
			t.Fatalf("expiresAt %v not after %v", neu, old)
		}
		// R-EWA-16: the refreshed (revoked) session cannot be refreshed.
		expect(t, c.do("POST", path, body), http.StatusNotFound, "SESSION_NOT_FOUND")
		// An expired session neither.
		move(time.Now().Add(wallets.SessionTTL + time.Hour))
		expect(t, c.do("POST", "/auth/sessions/"+fresh["id"].(string)+"/refresh", body), http.StatusNotFound, "SESSION_NOT_FOUND")
		// Malformed keys are refused before anything.
		expect(t, c.do("POST", path, cobj{"clientPublicKey": "05abc"}), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-EWA-17, R-EWA-18: revoking a session is a 202 then 204; afterwards, and
// for ids never issued, 404 SESSION_NOT_FOUND (safe to repeat); a revoked
// session's key signs nothing more.
func TestWallets_SessionRevoke_R_EWA_17_R_EWA_18(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, sess, key := e.wlLoggedIn(t)
		path := "/auth/sessions/" + sess["id"].(string)
		expect(t, c.signed("DELETE", path, nil, key), http.StatusNoContent, "")
		expect(t, c.do("DELETE", path, nil), http.StatusNotFound, "SESSION_NOT_FOUND")
		expect(t, c.do("DELETE", path, nil), http.StatusNotFound, "SESSION_NOT_FOUND")
		expect(t, c.do("DELETE", "/auth/sessions/Session:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), http.StatusNotFound, "SESSION_NOT_FOUND")
		expect(t, c.do("DELETE", "/auth/sessions/garbage", nil), http.StatusNotFound, "SESSION_NOT_FOUND")
		r := c.do("GET", "/auth/sessions?accountId="+c.accountID, nil)
		if n := len(r.JSON(t)["data"].([]any)); n != 0 {
			t.Fatalf("%d active sessions after revoke", n)
		}
		expect(t, c.do("GET", "/auth/sessions", nil), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-EWA-12, R-EWA-13, R-EWA-14: a wallet keeps at least one credential;
// adding a second one once the first is verified is a signed retry;
// revoking is 202 then 204, signed by a session of another credential,
// never by the credential being revoked; its sessions end with it.
func TestWallets_CredentialRevoke_R_EWA_12_R_EWA_13_R_EWA_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, email, _, emailKey := e.wlLoggedIn(t)
		emailPath := "/auth/credentials/" + email["id"].(string)
		expect(t, c.do("DELETE", emailPath, nil), http.StatusBadRequest, "INVALID_INPUT") // R-EWA-14
		// A verified credential exists: adding SMS_OTP needs its signature.
		add := cobj{"type": "SMS_OTP", "accountId": c.accountID}
		r := c.signed("POST", "/auth/credentials", add, emailKey)
		expect(t, r, http.StatusCreated, "")
		sms := r.JSON(t)
		if sms["nickname"] != "+14155551234" || sms["otpEncryptionTargetBundle"] == nil {
			t.Fatalf("sms credential %v", sms)
		}
		expect(t, c.signed("POST", "/auth/credentials", add, emailKey), http.StatusBadRequest, "SMS_OTP_CREDENTIAL_ALREADY_EXISTS")
		_, smsKey := c.login(sms, "000000")
		// R-EWA-12: 202 first.
		payload, rid := c.first("DELETE", emailPath, nil)
		// R-EWA-13: the credential cannot sign its own revocation.
		expect(t, c.retry("DELETE", emailPath, nil, emailKey, payload, rid), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		expect(t, c.retry("DELETE", emailPath, nil, smsKey, payload, rid), http.StatusNoContent, "")
		expect(t, c.do("DELETE", emailPath, nil), http.StatusNotFound, "AUTH_METHOD_NOT_FOUND")
		// Its sessions ended: its key signs nothing more.
		smsPath := "/auth/credentials/" + sms["id"].(string)
		r = c.do("GET", "/auth/credentials?accountId="+c.accountID, nil)
		if list := r.JSON(t)["data"].([]any); len(list) != 1 {
			t.Fatalf("credentials after revoke: %s", r.Body)
		}
		expect(t, c.do("DELETE", smsPath, nil), http.StatusBadRequest, "INVALID_INPUT")
		r = c.do("GET", "/auth/sessions?accountId="+c.accountID, nil)
		for _, s := range r.JSON(t)["data"].([]any) {
			if s.(map[string]any)["authMethodId"] == email["id"] {
				t.Fatal("a revoked credential's session is still active")
			}
		}
	})
}

// R-EWA-32, R-EWA-33, R-EWA-34: an email belongs to one wallet (409); ids of
// another tenant or never issued are 404 with the resource's code.
func TestWallets_CredentialScoping_R_EWA_32_R_EWA_33_R_EWA_34(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.wlSetup(t)
		cred := c.createOTP("EMAIL_OTP")
		other := e.wlClient(t, e.acCustomer(t)) // same email as the first customer
		expect(t, other.do("POST", "/auth/credentials", cobj{"type": "EMAIL_OTP", "accountId": other.accountID}),
			http.StatusConflict, "EMAIL_OTP_EMAIL_ALREADY_EXISTS")
		expect(t, c.do("POST", "/auth/credentials/AuthMethod:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b/challenge", nil),
			http.StatusNotFound, "AUTH_METHOD_NOT_FOUND")
		prod := withCreds(e.production)
		for _, r := range []resp{
			c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", nil, prod),
			c.do("DELETE", "/auth/credentials/"+cred["id"].(string), nil, prod),
		} {
			expect(t, r, http.StatusNotFound, "AUTH_METHOD_NOT_FOUND")
		}
		expect(t, c.do("GET", "/auth/credentials?accountId="+c.accountID, nil, prod), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, c.do("POST", "/auth/credentials", cobj{"type": "EMAIL_OTP", "accountId": c.accountID}, prod),
			http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		// A non-wallet account is not a wallet.
		usd := e.acAccount(t, "", "USD")["id"].(string)
		expect(t, c.do("POST", "/auth/credentials", cobj{"type": "EMAIL_OTP", "accountId": usd}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, c.do("POST", "/auth/credentials", cobj{"type": "TOTP", "accountId": "x"}), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-EWA-11: a compressed client key gets no key material; an uncompressed
// one (the deprecated legacy flow) gets encryptedSessionSigningKey, the
// session key sealed to it, which then signs for the wallet.
func TestWallets_LegacySessionKey_R_EWA_11(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, sess, key := e.wlLoggedIn(t)
		if _, ok := sess["encryptedSessionSigningKey"]; ok {
			t.Fatal("key material for a compressed client key")
		}
		eph := ephemeral(t)
		body := cobj{"clientPublicKey": hex.EncodeToString(eph.PublicKey().Bytes())} // uncompressed, 04…
		r := c.signed("POST", "/auth/sessions/"+sess["id"].(string)+"/refresh", body, key)
		expect(t, r, http.StatusOK, "")
		legacy := r.JSON(t)
		sealed, _ := legacy["encryptedSessionSigningKey"].(string)
		raw, err := wallets.OpenBundle(eph, wallets.InfoLegacy, sealed)
		if err != nil {
			t.Fatalf("encryptedSessionSigningKey %q: %v", sealed, err)
		}
		sk, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
		if err != nil || wallets.CompressedHex(&sk.PublicKey) != legacy["publicKey"] {
			t.Fatalf("sealed key does not match the session's public key: %v", err)
		}
		expect(t, c.signed("DELETE", "/auth/sessions/"+legacy["id"].(string), nil, sk), http.StatusNoContent, "")
		r = c.do("GET", "/auth/sessions?accountId="+c.accountID, nil)
		if strings.Contains(string(r.Body), "encryptedSessionSigningKey") {
			t.Fatal("key material in the session list")
		}
	})
}
