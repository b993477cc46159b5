package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The "Done when", tried as a new user would: a customer in Germany
// enrols SMS and TOTP, logs in, creates a payout quote (202,
// PENDING_AUTHORIZATION), authorizes it with a TOTP code computed here, and
// the payout completes; a second payout left unauthorized fails with
// SCA_NOT_COMPLETED and the balance is whole; five wrong codes lock the
// factor (423) until the lock expires; a US customer's payouts are
// unchanged (200).
func TestSCA_DoneWhen_GermanCustomerPayouts(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, advance := e.scaClock(t)
		e.acSupport(t, "USD")
		e.qtWebhook(t)
		de, us := e.scaCustomer(t, "DE"), e.scaCustomer(t, "US")
		payee := e.qtCustomer(t)
		src, dst := e.qtAccountID(t, de, "USD"), e.qtAccountID(t, payee, "USD")
		usSrc := e.qtAccountID(t, us, "USD")
		e.acFund(t, src, 100000)
		e.acFund(t, usSrc, 100000)

		// Who needs SCA is shown on the customer.
		if got := e.do("GET", "/customers/"+de, nil).JSON(t)["scaRequired"]; got != true {
			t.Fatalf("German customer scaRequired = %v", got)
		}
		if got := e.do("GET", "/customers/"+us, nil).JSON(t)["scaRequired"]; got != false {
			t.Fatalf("US customer scaRequired = %v", got)
		}

		// R-SCA-01, R-AUTH-03: valid credentials, no SCA session: 409
		// SCA_SESSION_REQUIRED, never 401; nothing is created.
		before := e.qtCounts(t)
		expect(t, e.do("POST", "/quotes", qtBody(src, dst, "SENDING", 1000)), http.StatusConflict, "SCA_SESSION_REQUIRED")
		if e.qtCounts(t) != before {
			t.Fatal("a refused quote changed something")
		}

		e.scaEnrolSMS(t, de)
		r := e.do("POST", scaPath("/sca/factors", de), cobj{"type": "TOTP"})
		expect(t, r, http.StatusOK, "")
		enrol := r.JSON(t)
		secret := enrol["secret"].(string)
		if uri := enrol["totpUri"].(string); !strings.HasPrefix(uri, "otpauth://totp/") || !strings.Contains(uri, "secret="+secret) {
			t.Fatalf("totpUri %q", uri)
		}
		expect(t, e.do("POST", scaPath("/sca/factors/confirm", de), cobj{"type": "TOTP", "secret": secret,
			"code": scaTOTP(t, secret, *now)}), http.StatusOK, "")
		factors := e.do("GET", scaPath("/sca/factors", de), nil).JSON(t)["factors"].([]any)
		if len(factors) != 2 {
			t.Fatalf("factors %v", factors)
		}

		// R-SCA-02, R-SCA-03: the login returns sessionExpiresAt, 180 days out.
		exp := e.scaLoginSMS(t, de)
		if want := now.Add(180 * 24 * time.Hour); !exp.Equal(want) {
			t.Fatalf("sessionExpiresAt %s, want %s", exp, want)
		}

		// R-SCA-04, R-VER-04: 202, PENDING_AUTHORIZATION, scaChallenge;
		// R-QUOTE-21: the quote (checked against the document) in that status.
		q := e.scaQuote(t, qtBody(src, dst, "SENDING", 2500, "scaFactor", "TOTP"))
		if q["status"] != "PENDING_AUTHORIZATION" {
			t.Fatalf("status %v", q["status"])
		}
		// R-SCA-06: the challenge's fields; R-CONV-02: its id prefix.
		ch := q["scaChallenge"].(map[string]any)
		if !strings.HasPrefix(ch["id"].(string), "ScaChallenge:") || ch["factor"] != "TOTP" || ch["purpose"] != "PAYOUT" {
			t.Fatalf("scaChallenge %v", ch)
		}
		if _, ok := ch["passkeyAssertionOptions"].(map[string]any); !ok {
			t.Fatalf("passkeyAssertionOptions %v", ch["passkeyAssertionOptions"])
		}
		if _, ok := ch["passkeyAllowedOrigins"].([]any); !ok {
			t.Fatalf("passkeyAllowedOrigins %v", ch["passkeyAllowedOrigins"])
		}
		if av := ch["availableFactors"].([]any); len(av) != 2 {
			t.Fatalf("availableFactors %v", av)
		}
		if x := e.scaTxn(t, q["transactionId"].(string)); x["status"] != "PENDING_AUTHORIZATION" {
			t.Fatalf("transaction %v", x["status"])
		}
		if got := e.qtBalance(t, de, "USD"); got != 100000 {
			t.Fatalf("balance %d before authorization", got)
		}

		// Authorized with a TOTP code computed here (next time step: the
		// confirmation used this one): the payout completes.
		advance(30 * time.Second)
		r = e.do("POST", "/quotes/"+q["id"].(string)+"/authorize", cobj{"code": scaTOTP(t, secret, *now), "factor": "TOTP"})
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t)["status"]; got != "PROCESSING" {
			t.Fatalf("authorized quote %v", got)
		}
		if x := e.scaTxn(t, q["transactionId"].(string)); x["status"] != "COMPLETED" {
			t.Fatalf("transaction %v", x["status"])
		}
		if got := e.qtBalance(t, de, "USD"); got != 100000-2500 {
			t.Fatalf("balance %d after the payout", got)
		}
		if !scaHasDecision(e.scaDecisions(t, de), "AUTHORIZATION", "APPROVED", "TOTP") {
			t.Fatal("no stored approval with its factor")
		}

		// R-SCA-08, R-TXN-27: a payout never authorized fails with
		// SCA_NOT_COMPLETED and the balance is whole.
		q2 := e.scaQuote(t, qtBody(src, dst, "SENDING", 4000))
		balance := e.qtBalance(t, de, "USD")
		advance(6 * time.Minute)
		e.scaExpire(t)
		x := e.scaTxn(t, q2["transactionId"].(string))
		if x["status"] != "FAILED" || x["failureReason"] != "SCA_NOT_COMPLETED" {
			t.Fatalf("unauthorized payout: %v %v", x["status"], x["failureReason"])
		}
		if got := e.do("GET", "/quotes/"+q2["id"].(string), nil).JSON(t)["status"]; got != "FAILED" {
			t.Fatalf("quote %v", got)
		}
		if got := e.qtBalance(t, de, "USD"); got != balance || got != 100000-2500 {
			t.Fatalf("balance %d, want %d", got, balance)
		}
		expect(t, e.do("POST", "/quotes/"+q2["id"].(string)+"/authorize", cobj{"code": "123456"}), http.StatusConflict, "CONFLICT")

		// R-SCA-07, R-ERR-19: five wrong codes lock the factor: 423 ACCOUNT_LOCKED,
		// even for the right code, until the lock expires.
		q3 := e.scaQuote(t, qtBody(src, dst, "SENDING", 1000, "scaFactor", "TOTP"))
		auth := "/quotes/" + q3["id"].(string) + "/authorize"
		wrong := "000000" // unless that is the code of the moment (one in a million)
		if scaTOTP(t, secret, *now) == wrong {
			wrong = "000001"
		}
		for i := 1; i <= 5; i++ {
			r := e.do("POST", auth, cobj{"code": wrong, "factor": "TOTP"})
			if i < 5 {
				expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
				continue
			}
			expect(t, r, http.StatusLocked, "ACCOUNT_LOCKED")
			if r.JSON(t)["details"].(map[string]any)["lockedUntil"] == nil {
				t.Fatalf("no lockedUntil: %s", r.Body)
			}
		}
		advance(30 * time.Second)
		expect(t, e.do("POST", auth, cobj{"code": scaTOTP(t, secret, *now), "factor": "TOTP"}), http.StatusLocked, "ACCOUNT_LOCKED")
		if got := e.qtBalance(t, de, "USD"); got != 100000-2500 {
			t.Fatalf("wrong codes moved money: %d", got)
		}
		if !scaHasDecision(e.scaDecisions(t, de), "AUTHORIZATION", "LOCKED", "TOTP") {
			t.Fatal("no stored lock decision")
		}
		// The lock expires after 15 minutes: the TOTP factor logs in again.
		advance(16 * time.Minute)
		expect(t, e.do("POST", scaPath("/sca/login/start", de), cobj{"factor": "TOTP"}), http.StatusOK, "")
		expect(t, e.do("POST", scaPath("/sca/login/complete", de), cobj{"factor": "TOTP", "code": scaTOTP(t, secret, *now),
			"endUserIpAddress": "203.0.113.42"}), http.StatusOK, "")

		// A US customer's payouts are unchanged: 200 with no challenge; the
		// SCA endpoints answer 409 for it.
		r = e.do("POST", "/quotes", qtBody(usSrc, dst, "SENDING", 1000))
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["status"] != "PENDING" || m["scaChallenge"] != nil {
			t.Fatalf("US quote %v", m)
		}
		expect(t, e.do("GET", scaPath("/sca/factors", us), nil), http.StatusConflict, "CONFLICT")
	})
}
