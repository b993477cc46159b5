package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Factors: list, delete (never the last), and the liveness-gated reset;
// every refused step changes nothing the customer can see.
func TestSCA_FactorsDeleteAndReset(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, advance := e.scaClock(t)
		e.acSupport(t, "USD")
		de := e.scaCustomer(t, "DE")
		expect(t, e.do("GET", scaPath("/sca/factors", "Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"), nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("GET", "/sca/factors", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", scaPath("/sca/factors", de), cobj{"type": "EMAIL_OTP"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", scaPath("/sca/login/start", de), cobj{"factor": "SMS_OTP"}), http.StatusBadRequest, "INVALID_INPUT")
		sms := e.scaEnrolSMS(t, de)
		expect(t, e.do("POST", scaPath("/sca/factors", de), cobj{"type": "SMS_OTP"}), http.StatusConflict, "CONFLICT")
		// The last factor is never deleted.
		expect(t, e.do("DELETE", scaPath("/sca/factors/"+sms, de), nil), http.StatusConflict, "CONFLICT")
		secret := e.scaEnrolTOTP(t, de, *now)
		// The TOTP secret is stored only sealed; codes only as hashes.
		row, err := e.db.Read().GetScaCustomer(context.Background(), e.acTenant(), de, false)
		if err != nil || strings.Contains(string(row.Document), secret) || strings.Contains(string(row.Document), "123456") {
			t.Fatalf("SCA state holds a secret in clear (%v): %s", err, row.Document)
		}
		list := e.do("GET", scaPath("/sca/factors", de), nil).JSON(t)["factors"].([]any)
		var totpID string
		for _, f := range list {
			if m := f.(map[string]any); m["factor"] == "TOTP" {
				totpID = m["credentialId"].(string)
			}
		}
		// A wrong TOTP confirmation of a second enrolment counts; the
		// secret must be the pending one's.
		r := e.do("POST", scaPath("/sca/factors/confirm", de), cobj{"type": "TOTP", "secret": secret, "code": "000000"})
		expect(t, r, http.StatusNotFound, "NOT_FOUND")

		// Reset the TOTP factor: liveness first, then complete.
		r = e.do("POST", scaPath("/sca/factors/reset", de), cobj{"factor": "TOTP"})
		expect(t, r, http.StatusCreated, "")
		reset := r.JSON(t)["resetId"].(string)
		resetPath := "/sca/factors/reset/" + reset
		if got := e.do("GET", scaPath(resetPath, de), nil).JSON(t)["status"]; got != "INITIATED" {
			t.Fatalf("reset status %v", got)
		}
		expect(t, e.do("POST", scaPath(resetPath+"/complete", de), nil), http.StatusBadRequest, "INVALID_INPUT")
		r = e.do("POST", scaPath("/sandbox"+resetPath+"/liveness", de), cobj{"outcome": "PASSED"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "LIVENESS_PASSED" {
			t.Fatalf("after liveness %s", r.Body)
		}
		expect(t, e.do("POST", scaPath(resetPath+"/complete", de), nil), http.StatusNoContent, "")
		st := e.do("GET", scaPath(resetPath, de), nil).JSON(t)
		if st["status"] != "COMPLETED" || st["enrollmentStatus"] != "PENDING" {
			t.Fatalf("completed reset %v", st)
		}
		list = e.do("GET", scaPath("/sca/factors", de), nil).JSON(t)["factors"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["factor"] != "SMS_OTP" {
			t.Fatalf("factors after the TOTP reset %v", list)
		}
		expect(t, e.do("DELETE", scaPath("/sca/factors/"+totpID, de), nil), http.StatusNotFound, "NOT_FOUND")

		// Re-enrolled, the TOTP factor may be deleted (SMS_OTP remains).
		advance(30 * time.Second)
		e.scaEnrolTOTP(t, de, *now)
		list = e.do("GET", scaPath("/sca/factors", de), nil).JSON(t)["factors"].([]any)
		for _, f := range list {
			if m := f.(map[string]any); m["factor"] == "TOTP" {
				totpID = m["credentialId"].(string)
			}
		}
		expect(t, e.do("DELETE", scaPath("/sca/factors/"+totpID, de), nil), http.StatusNoContent, "")

		// An SMS_OTP reset takes the new number; a rejected liveness ends a
		// reset; at most five resets a day.
		r = e.do("POST", scaPath("/sca/factors/reset", de), cobj{"factor": "SMS_OTP"})
		expect(t, r, http.StatusCreated, "")
		smsReset := "/sca/factors/reset/" + r.JSON(t)["resetId"].(string)
		expect(t, e.do("POST", scaPath("/sandbox"+smsReset+"/liveness", de), cobj{"outcome": "PASSED"}), http.StatusOK, "")
		expect(t, e.do("POST", scaPath(smsReset+"/complete", de), cobj{"mobile": cobj{"countryCode": "+49", "number": "x"}}),
			http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", scaPath(smsReset+"/complete", de), cobj{"mobile": cobj{"countryCode": "+49", "number": "15112345678"}}),
			http.StatusNoContent, "")
		for i := 0; i < 3; i++ {
			r = e.do("POST", scaPath("/sca/factors/reset", de), cobj{"factor": "SMS_OTP"})
			expect(t, r, http.StatusCreated, "")
		}
		rejected := "/sca/factors/reset/" + r.JSON(t)["resetId"].(string)
		r = e.do("POST", scaPath("/sandbox"+rejected+"/liveness", de), cobj{"outcome": "REJECTED"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "REJECTED" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("POST", scaPath(rejected+"/complete", de), nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", scaPath("/sca/factors/reset", de), cobj{"factor": "SMS_OTP"}), http.StatusTooManyRequests, "RATE_LIMITED")
		// A reset's window closes after 30 minutes.
		advance(31 * time.Minute)
		if got := e.do("GET", scaPath(rejected, de), nil).JSON(t)["status"]; got != "REJECTED" {
			t.Fatalf("terminal reset became %v", got)
		}
		ds := e.scaDecisions(t, de)
		if !scaHasDecision(ds, "RESET", "COMPLETED", "TOTP") || !scaHasDecision(ds, "ENROLMENT", "DELETED", "TOTP") {
			t.Fatalf("decisions %v", ds)
		}
	})
}

// R-SCA-07 (login): the platform's security events: failed logins lock the
// customer (423 ACCOUNT_LOCKED at login and authorization) and a completed
// password reset revokes the SCA session (R-SCA-01: 409 again) and clears
// the lock.
func TestSCA_RecordEvent_LockAndRevoke_R_SCA_07(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, advance := e.scaClock(t)
		de, src, dst, _ := e.scaReady(t, *now)
		q := e.scaQuote(t, qtBody(src, dst, "SENDING", 1000))
		expect(t, e.do("POST", scaPath("/sca/record-event", de), cobj{"eventType": "LOGGED_IN"}), http.StatusBadRequest, "INVALID_INPUT")
		var last map[string]any
		for i := 0; i < 5; i++ {
			r := e.do("POST", scaPath("/sca/record-event", de), cobj{"eventType": "FAILED_LOGIN_ATTEMPT"})
			expect(t, r, http.StatusOK, "")
			last = r.JSON(t)
		}
		if last["failedAttempts"] != float64(5) || last["lockedUntil"] == nil || last["suspended"] != false {
			t.Fatalf("after five failed logins %v", last)
		}
		expect(t, e.do("POST", scaPath("/sca/login/start", de), cobj{"factor": "SMS_OTP"}), http.StatusLocked, "ACCOUNT_LOCKED")
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/authorize", cobj{"code": "123456"}), http.StatusLocked, "ACCOUNT_LOCKED")
		r := e.do("POST", scaPath("/sca/record-event", de), cobj{"eventType": "RESET_PASSWORD_COMPLETED"})
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["failedAttempts"] != float64(0) || m["lockedUntil"] != nil {
			t.Fatalf("after the password reset %v", m)
		}
		expect(t, e.do("POST", "/quotes", qtBody(src, dst, "SENDING", 1000)), http.StatusConflict, "SCA_SESSION_REQUIRED")
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/authorize", cobj{"code": "123456"}), http.StatusConflict, "SCA_SESSION_REQUIRED")
		e.scaLoginSMS(t, de)
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/authorize", cobj{"code": "123456"}), http.StatusOK, "")

		// R-SCA-03: the session ends 180 days after the login.
		advance(180*24*time.Hour + time.Second)
		expect(t, e.do("POST", "/quotes", qtBody(src, dst, "SENDING", 1000)), http.StatusConflict, "SCA_SESSION_REQUIRED")
		if !scaHasDecision(e.scaDecisions(t, de), "SECURITY_EVENT", "RECORDED", "") {
			t.Fatal("no recorded event")
		}
	})
}

// Wrong login codes count toward the factor's lock; an SMS login needs its
// challengeId; a login code expires.
func TestSCA_LoginRefusals(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		_, advance := e.scaClock(t)
		e.acSupport(t, "USD")
		de := e.scaCustomer(t, "DE")
		e.scaEnrolSMS(t, de)
		r := e.do("POST", scaPath("/sca/login/start", de), cobj{"factor": "SMS_OTP"})
		expect(t, r, http.StatusOK, "")
		ch := r.JSON(t)["challengeId"].(string)
		complete := func(code, challenge string) resp {
			return e.do("POST", scaPath("/sca/login/complete", de), cobj{"factor": "SMS_OTP", "challengeId": challenge,
				"code": code, "endUserIpAddress": "203.0.113.42"})
		}
		expect(t, complete("123456", "ScaLogin:other"), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", scaPath("/sca/login/complete", de), cobj{"factor": "SMS_OTP", "code": "123456",
			"endUserIpAddress": "not-an-ip"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, complete("111111", ch), http.StatusBadRequest, "INVALID_INPUT")
		advance(6 * time.Minute)
		expect(t, complete("123456", ch), http.StatusBadRequest, "INVALID_INPUT")
		r = e.do("POST", scaPath("/sca/login/start", de), cobj{"factor": "SMS_OTP"})
		ch = r.JSON(t)["challengeId"].(string)
		for i := 0; i < 3; i++ {
			expect(t, complete("111111", ch), http.StatusBadRequest, "INVALID_INPUT")
		}
		expect(t, complete("111111", ch), http.StatusLocked, "ACCOUNT_LOCKED") // fifth wrong code
		expect(t, complete("123456", ch), http.StatusLocked, "ACCOUNT_LOCKED")
	})
}

// Production has no SMS partner configured: SMS_OTP enrolment refuses
// clearly (409) and stores nothing; TOTP needs no partner and works; nor
// is there a liveness provider for factor resets (409).
func TestSCA_ProductionRefusesSMSAndReset(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		prod := withCreds(e.production)
		body := cwith(custIndividual("Erika Mustermann"), "address", cwith(custAddress, "country", "DE", "state", nil), "nationality", "DE")
		r := e.do("POST", "/customers", body, prod)
		expect(t, r, http.StatusCreated, "")
		de := r.JSON(t)["id"].(string)
		expect(t, e.do("POST", scaPath("/sca/factors", de), cobj{"type": "SMS_OTP"}, prod), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", scaPath("/sca/factors/confirm", de), cobj{"type": "SMS_OTP", "code": "123456"}, prod),
			http.StatusNotFound, "NOT_FOUND")
		r = e.do("POST", scaPath("/sca/factors", de), cobj{"type": "TOTP"}, prod)
		expect(t, r, http.StatusOK, "")
		secret := r.JSON(t)["secret"].(string)
		expect(t, e.do("POST", scaPath("/sca/factors/confirm", de), cobj{"type": "TOTP", "secret": secret,
			"code": scaTOTP(t, secret, e.db.Now())}, prod), http.StatusOK, "")
		// No liveness provider in production: a reset refuses clearly.
		expect(t, e.do("POST", scaPath("/sca/factors/reset", de), cobj{"factor": "TOTP"}, prod), http.StatusConflict, "CONFLICT")
		// The sandbox's customer of the same id does not exist.
		expect(t, e.do("GET", scaPath("/sca/factors", de), nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
	})
}
