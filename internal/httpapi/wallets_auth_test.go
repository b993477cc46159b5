package httpapi

import (
	"context"
	"crypto/ecdsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

// wlSetup enables wallets and returns a client on a new customer's wallet.
func (e *env) wlSetup(t *testing.T) *walletClient {
	t.Helper()
	e.wlEnable(t)
	return e.wlClient(t, e.qtCustomer(t))
}

// R-EWA-01, R-EWA-06, R-EWA-07, R-EWA-32: an EMAIL_OTP credential gets a
// code (000000 in sandbox) and a target bundle; a challenge sends a new code
// with a fresh bundle; the HPKE-sealed attempt answers 202 with a payload,
// and the retry stamped with the attempt's key opens a session.
func TestWallets_OTPLogin_R_EWA_01_R_EWA_06_R_EWA_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.wlSetup(t)
		cred := c.createOTP("EMAIL_OTP")
		if cred["nickname"] != "jane@example.com" || cred["verified"] != false {
			t.Fatalf("credential %v", cred)
		}
		// R-EWA-32: one EMAIL_OTP per wallet.
		expect(t, c.do("POST", "/auth/credentials", cobj{"type": "EMAIL_OTP", "accountId": c.accountID}),
			http.StatusBadRequest, "EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS")
		// R-EWA-01: a challenge returns a fresh bundle; the old one no longer opens.
		r := c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", nil)
		expect(t, r, http.StatusOK, "")
		old := cred["otpEncryptionTargetBundle"].(string)
		cred = r.JSON(t)
		if cred["otpEncryptionTargetBundle"] == old || cred["otpEncryptionTargetBundle"] == nil {
			t.Fatal("challenge did not issue a fresh bundle")
		}
		key, _ := wallets.NewKey()
		path := "/auth/credentials/" + cred["id"].(string) + "/verify"
		stale := cobj{"type": "EMAIL_OTP", "encryptedOtpBundle": sealAttempt(t, old, "000000", key)}
		expect(t, c.do("POST", path, stale), http.StatusBadRequest, "INVALID_INPUT")

		body := cobj{"type": "EMAIL_OTP", "encryptedOtpBundle": sealAttempt(t, cred["otpEncryptionTargetBundle"].(string), "000000", key)}
		// R-SBX-16: the sandbox code 000000, sealed into encryptedOtpBundle,
		// proceeds to 202 (a wrong code is 401: TestWallets_OTPAttemptsLimited).
		payload, rid := c.first("POST", path, body) // R-EWA-06
		if !strings.Contains(payload, wallets.CompressedHex(&key.PublicKey)) {
			t.Fatalf("payload does not bind the attempt's key: %s", payload)
		}
		// Another key cannot complete the login.
		other, _ := wallets.NewKey()
		expect(t, c.retry("POST", path, body, other, payload, rid), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		r = c.retry("POST", path, body, key, payload, rid)
		expect(t, r, http.StatusOK, "") // R-EWA-07
		sess := r.JSON(t)
		exp, err := time.Parse(time.RFC3339, sess["expiresAt"].(string))
		if err != nil || !exp.After(time.Now()) {
			t.Fatalf("expiresAt %v", sess["expiresAt"])
		}
		if _, ok := sess["encryptedSessionSigningKey"]; ok {
			t.Fatal("key material returned for a client-held key")
		}
		// Replaying the completed retry opens nothing more.
		expect(t, c.retry("POST", path, body, key, payload, rid), http.StatusUnauthorized, "REQUEST_ALREADY_COMPLETED")
		r = c.do("GET", "/auth/sessions?accountId="+c.accountID, nil)
		expect(t, r, http.StatusOK, "")
		if n := len(r.JSON(t)["data"].([]any)); n != 1 {
			t.Fatalf("%d sessions after a replay, want 1", n)
		}
		r = c.do("GET", "/auth/credentials?accountId="+c.accountID, nil)
		if list := r.JSON(t)["data"].([]any); len(list) != 1 || list[0].(map[string]any)["verified"] != true {
			t.Fatalf("credentials %s", r.Body)
		}
		// The code was consumed: the same attempt again needs a new challenge.
		expect(t, c.do("POST", path, body), http.StatusBadRequest, "AUTH_CREDENTIAL_VERIFICATION_REQUIRED")
	})
}

// OTP attempts are limited per code: wrong codes are 401 until the limit,
// then the code is void (400 AUTH_CREDENTIAL_VERIFICATION_EXPIRED) and even
// the right one fails until a new challenge.
func TestWallets_OTPAttemptsLimited(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.wlSetup(t)
		cred := c.createOTP("EMAIL_OTP")
		key, _ := wallets.NewKey()
		path := "/auth/credentials/" + cred["id"].(string) + "/verify"
		attempt := func(code string) resp {
			return c.do("POST", path, cobj{"type": "EMAIL_OTP",
				"encryptedOtpBundle": sealAttempt(t, cred["otpEncryptionTargetBundle"].(string), code, key)})
		}
		for i := 1; i < wallets.MaxOTPAttempts; i++ {
			expect(t, attempt("123456"), http.StatusUnauthorized, "UNAUTHORIZED") // R-SBX-16: only 000000 is the sandbox code
		}
		expect(t, attempt("654321"), http.StatusBadRequest, "AUTH_CREDENTIAL_VERIFICATION_EXPIRED")
		expect(t, attempt("000000"), http.StatusBadRequest, "AUTH_CREDENTIAL_VERIFICATION_REQUIRED")
		// The code expires too.
		r := c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", nil)
		cred = r.JSON(t)
		move := e.acClock(t, time.Now())
		move(time.Now().Add(6 * time.Minute))
		expect(t, attempt("000000"), http.StatusBadRequest, "AUTH_CREDENTIAL_VERIFICATION_EXPIRED")
		// Malformed bundles change nothing and name the field.
		for _, bad := range []string{"", "{}", `{"encappedPublic":"04","ciphertext":"00"}`, "not json"} {
			r := c.do("POST", path, cobj{"type": "EMAIL_OTP", "encryptedOtpBundle": bad})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		}
	})
}

// wlLoggedIn returns a client with a verified EMAIL_OTP credential, its
// session and the session's key.
func (e *env) wlLoggedIn(t *testing.T) (*walletClient, map[string]any, map[string]any, *ecdsa.PrivateKey) {
	t.Helper()
	c := e.wlSetup(t)
	cred := c.createOTP("EMAIL_OTP")
	sess, key := c.login(cred, "000000")
	return c, cred, sess, key
}

// R-AUTH-10, R-AUTH-11, R-AUTH-14, R-AUTH-15, R-AUTH-16, R-AUTH-17,
// R-AUTH-12, R-EWA-34: every failure of a signed retry has its code and
// changes nothing; then the right retry completes, once.
func TestWallets_SignedRetryFailures(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, sess, key := e.wlLoggedIn(t)
		path := "/auth/sessions/" + sess["id"].(string) + "/refresh"
		newKey, _ := wallets.NewKey()
		body := cobj{"clientPublicKey": wallets.CompressedHex(&newKey.PublicKey)}
		payload, rid := c.first("POST", path, body) // R-AUTH-10
		good := stamp(t, key, payload)
		_, _, key2 := e.wlLoggedInAnother(t)
		before := e.snapshotWallets(t)
		sig := func(v string) reqOpt { return withHeader(signedretry.HeaderSignature, v) }
		reqID := func(v string) reqOpt { return withHeader(signedretry.HeaderRequestID, v) }
		// R-AUTH-15
		expect(t, c.do("POST", path, body, sig(good)), http.StatusUnauthorized, "REQUEST_ID_MISSING")
		expect(t, c.do("POST", path, body, reqID(rid)), http.StatusUnauthorized, "WALLET_SIGNATURE_MISSING")
		// R-AUTH-16
		for _, garbage := range []string{"garbage", "e30", strings.Repeat("A", 2000), good[:len(good)-8]} {
			expect(t, c.do("POST", path, body, sig(garbage), reqID(rid)), http.StatusUnauthorized, "WALLET_SIGNATURE_MALFORMED")
		}
		// R-AUTH-14
		other, _ := wallets.NewKey()
		changed := cobj{"clientPublicKey": wallets.CompressedHex(&other.PublicKey)}
		expect(t, c.do("POST", path, changed, sig(good), reqID(rid)), http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
		// R-AUTH-17
		expect(t, c.do("POST", path, body, sig(stamp(t, other, payload)), reqID(rid)), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		// A stamp over another payload.
		expect(t, c.do("POST", path, body, sig(stamp(t, key, payload+" ")), reqID(rid)), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		// R-EWA-34: unknown Request-Id.
		expect(t, c.do("POST", path, body, sig(good), reqID("Request:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b")), http.StatusNotFound, "REQUEST_NOT_FOUND")
		expect(t, c.do("POST", path, body, sig(good), reqID("nonsense")), http.StatusNotFound, "REQUEST_NOT_FOUND")
		// R-AUTH-12: a session of another wallet cannot sign.
		expect(t, c.do("POST", path, body, sig(stamp(t, key2, payload)), reqID(rid)), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		// Another token of the platform cannot complete this token's request.
		if got := e.snapshotWallets(t); got != before {
			t.Fatalf("refused retries changed state:\n%s\n%s", before, got)
		}
		// R-AUTH-11: the right retry completes, once.
		r := c.do("POST", path, body, sig(good), reqID(rid))
		expect(t, r, http.StatusOK, "")
		// The refreshed session is gone, so the replay finds nothing to refresh.
		expect(t, c.do("POST", path, body, sig(good), reqID(rid)), http.StatusNotFound, "SESSION_NOT_FOUND")
	})
}

// wlLoggedInAnother logs in on a second customer's wallet (its own email).
func (e *env) wlLoggedInAnother(t *testing.T) (*walletClient, map[string]any, *ecdsa.PrivateKey) {
	t.Helper()
	r := e.do("POST", "/customers", cwith(custIndividual("Bob Roe"), "email", "bob@example.com", "phoneNumber", "+14155550000"))
	expect(t, r, http.StatusCreated, "")
	c := e.wlClient(t, r.JSON(t)["id"].(string))
	sess, key := c.login(c.createOTP("EMAIL_OTP"), "000000")
	return c, sess, key
}

// snapshotWallets captures the wallet state a refused request must not
// change: signed requests, credentials and sessions with their statuses.
func (e *env) snapshotWallets(t *testing.T) string {
	t.Helper()
	d, err := e.db.Read().WalletAuthDigest(context.Background(), e.acTenant())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
