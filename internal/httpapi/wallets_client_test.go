package httpapi

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

// walletClient is what a platform's app does against the API: it holds
// session keys on the device and stamps what the service asks it to sign.
type walletClient struct {
	e         *env
	t         *testing.T
	accountID string
}

func (e *env) wlClient(t *testing.T, customerID string) *walletClient {
	return &walletClient{e: e, t: t, accountID: e.wlWallet(t, customerID)["id"].(string)}
}

var jsonCT = withHeader("Content-Type", "application/json")

func (c *walletClient) do(method, path string, body any, opts ...reqOpt) resp {
	c.t.Helper()
	return c.e.do(method, path, body, append([]reqOpt{jsonCT}, opts...)...)
}

// stamp signs payload with key as the Service-Wallet-Signature value.
func stamp(t *testing.T, key *ecdsa.PrivateKey, payload string) string {
	t.Helper()
	s, err := signedretry.Sign(key, payload)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// first sends the unsigned first step and returns its challenge (R-AUTH-10).
func (c *walletClient) first(method, path string, body any) (payload, requestID string) {
	c.t.Helper()
	r := c.do(method, path, body)
	expect(c.t, r, http.StatusAccepted, "")
	m := r.JSON(c.t)
	payload, _ = m["payloadToSign"].(string)
	requestID, _ = m["requestId"].(string)
	if payload == "" || requestID == "" || m["expiresAt"] == nil {
		c.t.Fatalf("202 without payloadToSign, requestId or expiresAt: %s", r.Body)
	}
	return payload, requestID
}

// retry sends the signed retry of a first step.
func (c *walletClient) retry(method, path string, body any, key *ecdsa.PrivateKey, payload, requestID string) resp {
	c.t.Helper()
	return c.do(method, path, body, withHeader(signedretry.HeaderSignature, stamp(c.t, key, payload)),
		withHeader(signedretry.HeaderRequestID, requestID))
}

// signed runs both steps, signing with key (R-AUTH-11).
func (c *walletClient) signed(method, path string, body any, key *ecdsa.PrivateKey) resp {
	c.t.Helper()
	p, rid := c.first(method, path, body)
	return c.retry(method, path, body, key, p, rid)
}

// createOTP adds an OTP credential without a signature (bootstrap) and
// returns it.
func (c *walletClient) createOTP(typ string) map[string]any {
	c.t.Helper()
	r := c.do("POST", "/auth/credentials", cobj{"type": typ, "accountId": c.accountID})
	expect(c.t, r, http.StatusCreated, "")
	return r.JSON(c.t)
}

// sealAttempt seals an OTP attempt to a target bundle, with key's public
// half as the session key to be.
func sealAttempt(t *testing.T, bundle, code string, key *ecdsa.PrivateKey) string {
	t.Helper()
	target, err := wallets.ParseTargetBundle(bundle)
	if err != nil {
		t.Fatalf("target bundle %q: %v", bundle, err)
	}
	sealed, err := wallets.SealBundle(target, wallets.InfoOTP, wallets.OTPAttemptPlaintext(code, wallets.CompressedHex(&key.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

// login verifies an OTP credential with code through HPKE and the signed
// retry, and returns the session and its private key.
func (c *walletClient) login(cred map[string]any, code string) (map[string]any, *ecdsa.PrivateKey) {
	c.t.Helper()
	key, _ := wallets.NewKey()
	path := "/auth/credentials/" + cred["id"].(string) + "/verify"
	body := cobj{"type": cred["type"], "encryptedOtpBundle": sealAttempt(c.t, cred["otpEncryptionTargetBundle"].(string), code, key)}
	r := c.signed("POST", path, body, key)
	expect(c.t, r, http.StatusOK, "")
	return r.JSON(c.t), key
}

// ephemeral is a fresh ECDH key (export's clientPublicKey).
func ephemeral(t *testing.T) *ecdh.PrivateKey {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }
