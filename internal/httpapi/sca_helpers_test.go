package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// scaCustomer creates a customer with terms whose address and nationality
// are country (DE: needs SCA; US: does not).
func (e *env) scaCustomer(t *testing.T, country string) string {
	t.Helper()
	typ, version := e.custTerms(t)
	addr := cwith(custAddress, "country", country, "state", nil)
	body := cwith(custIndividual("Erika Mustermann"), "address", addr, "nationality", country,
		"agreementConsents", []any{custConsent(typ, version)})
	r := e.do("POST", "/customers", body)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)["id"].(string)
}

// scaClock fixes the store clock at a 30-second boundary (TOTP steps) and
// returns the time and a function that moves it.
func (e *env) scaClock(t *testing.T) (*time.Time, func(time.Duration)) {
	t.Helper()
	now := time.Unix((time.Now().Unix()/30)*30, 0).UTC()
	set := e.acClock(t, now)
	return &now, func(d time.Duration) { now = now.Add(d); set(now) }
}

func scaPath(path, customerID string) string { return path + "?customerId=" + customerID }

// scaEnrolSMS enrols and confirms the customer's SMS_OTP factor (sandbox
// code 123456).
func (e *env) scaEnrolSMS(t *testing.T, c string) string {
	t.Helper()
	r := e.do("POST", scaPath("/sca/factors", c), cobj{"type": "SMS_OTP"})
	expect(t, r, http.StatusOK, "")
	r = e.do("POST", scaPath("/sca/factors/confirm", c), cobj{"type": "SMS_OTP", "code": "123456"})
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)["factor"].(map[string]any)["credentialId"].(string)
}

// scaEnrolTOTP enrols and confirms a TOTP factor with a code computed at
// the store time now; it returns the secret.
func (e *env) scaEnrolTOTP(t *testing.T, c string, now time.Time) string {
	t.Helper()
	r := e.do("POST", scaPath("/sca/factors", c), cobj{"type": "TOTP"})
	expect(t, r, http.StatusOK, "")
	secret := r.JSON(t)["secret"].(string)
	expect(t, e.do("POST", scaPath("/sca/factors/confirm", c), cobj{"type": "TOTP", "secret": secret,
		"code": scaTOTP(t, secret, now)}), http.StatusOK, "")
	return secret
}

// scaTOTP computes the RFC 6238 code of secret at at.
func scaTOTP(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// scaLoginSMS opens the customer's SCA session with the SMS factor and
// returns sessionExpiresAt.
func (e *env) scaLoginSMS(t *testing.T, c string) time.Time {
	t.Helper()
	r := e.do("POST", scaPath("/sca/login/start", c), cobj{"factor": "SMS_OTP"})
	expect(t, r, http.StatusOK, "")
	challenge := r.JSON(t)["challengeId"].(string)
	r = e.do("POST", scaPath("/sca/login/complete", c), cobj{"factor": "SMS_OTP", "challengeId": challenge,
		"code": "123456", "endUserIpAddress": "203.0.113.42"})
	expect(t, r, http.StatusOK, "")
	at, err := time.Parse(time.RFC3339Nano, r.JSON(t)["sessionExpiresAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// scaQuote posts a quote expecting 202 and returns it.
func (e *env) scaQuote(t *testing.T, body any) map[string]any {
	t.Helper()
	r := e.do("POST", "/quotes", body)
	expect(t, r, http.StatusAccepted, "")
	return r.JSON(t)
}

func (e *env) scaTxn(t *testing.T, id string) map[string]any {
	t.Helper()
	r := e.do("GET", "/transactions/"+id, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// scaExpire runs the quote expiry sweep (the node's runner does it every
// interval; tests with a fixed clock run it themselves).
func (e *env) scaExpire(t *testing.T) {
	t.Helper()
	if _, err := e.srv.quoteService().ExpireDue(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
}

// scaDecisions lists the customer's SCA decisions.
func (e *env) scaDecisions(t *testing.T, c string) []map[string]any {
	t.Helper()
	r := e.do("GET", scaPath("/sca/decisions", c), nil)
	expect(t, r, http.StatusOK, "")
	var out []map[string]any
	for _, d := range r.JSON(t)["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

func scaHasDecision(ds []map[string]any, kind, outcome, factor string) bool {
	for _, d := range ds {
		if d["kind"] == kind && d["outcome"] == outcome && (factor == "" || d["factor"] == factor) {
			return true
		}
	}
	return false
}
