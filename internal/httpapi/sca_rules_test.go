package httpapi

import (
	"net/http"
	"testing"
	"time"
)

// scaReady makes a German customer with SMS and TOTP factors and an SCA
// session, and a payee; it returns the customer, its funded USD account,
// the payee's USD account and the TOTP secret.
func (e *env) scaReady(t *testing.T, now time.Time, currencies ...string) (string, string, string, string) {
	t.Helper()
	e.acSupport(t, append([]string{"USD"}, currencies...)...)
	e.qtWebhook(t)
	de, payee := e.scaCustomer(t, "DE"), e.qtCustomer(t)
	src, dst := e.qtAccountID(t, de, "USD"), e.qtAccountID(t, payee, "USD")
	e.acFund(t, src, 100000)
	e.scaEnrolSMS(t, de)
	secret := e.scaEnrolTOTP(t, de, now)
	e.scaLoginSMS(t, de)
	return de, src, dst, secret
}

// R-SCA-05: executing a PENDING quote of a customer who needs SCA (here:
// the platform added the customer's region after the quote was made)
// answers the quote PENDING_AUTHORIZATION with the same transactionId; a
// second execute is 409; the SMS code can be re-sent (not twice in 30 s);
// authorizing with it executes the payout.
func TestSCA_ExecutePendingQuote_R_SCA_05(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		_, advance := e.scaClock(t)
		e.acSupport(t, "USD")
		e.qtWebhook(t)
		br, payee := e.scaCustomer(t, "BR"), e.qtCustomer(t)
		src, dst := e.qtAccountID(t, br, "USD"), e.qtAccountID(t, payee, "USD")
		e.acFund(t, src, 10000)
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 1000))
		expect(t, e.do("GET", scaPath("/sca/factors", br), nil), http.StatusConflict, "CONFLICT")

		r := e.do("PATCH", "/sca/settings", cobj{"additionalRegions": []string{"BR"}})
		expect(t, r, http.StatusOK, "")
		if got := e.do("GET", "/customers/"+br, nil).JSON(t)["scaRequired"]; got != true {
			t.Fatalf("scaRequired %v after the platform added BR", got)
		}
		exec := "/quotes/" + q["id"].(string) + "/execute"
		// R-SCA-01: no session yet.
		expect(t, e.do("POST", exec, nil), http.StatusConflict, "SCA_SESSION_REQUIRED")
		e.scaEnrolSMS(t, br)
		e.scaLoginSMS(t, br)

		r = e.do("POST", exec, nil)
		expect(t, r, http.StatusOK, "")
		held := r.JSON(t)
		if held["status"] != "PENDING_AUTHORIZATION" || held["transactionId"] != q["transactionId"] || held["scaChallenge"] == nil {
			t.Fatalf("executed SCA quote %v", held)
		}
		if got := e.qtBalance(t, br, "USD"); got != 10000 {
			t.Fatalf("balance %d before authorization", got)
		}
		expect(t, e.do("POST", exec, nil), http.StatusConflict, "CONFLICT")

		resend := "/quotes/" + q["id"].(string) + "/authorize/resend"
		expect(t, e.do("POST", resend, nil), http.StatusTooManyRequests, "RATE_LIMITED")
		advance(31 * time.Second)
		expect(t, e.do("POST", resend, nil), http.StatusNoContent, "")
		if ch := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t)["scaChallenge"].(map[string]any); ch["factor"] != "SMS_OTP" {
			t.Fatalf("challenge after resend %v", ch)
		}

		r = e.do("POST", "/quotes/"+q["id"].(string)+"/authorize", cobj{"code": "123456"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "PROCESSING" || e.qtBalance(t, br, "USD") != 9000 {
			t.Fatalf("authorized: %s", r.Body)
		}
	})
}

// Dynamic linking: a challenge is bound to one quote's payee and amounts;
// authorizing one payout never authorizes another, and a TOTP code already
// used is refused (replay) and counts toward the lock. Wrong proofs move no
// money. A proof for another customer's quote fails too.
func TestSCA_DynamicLinking_R_SCA_04(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, advance := e.scaClock(t)
		de, src, dst, secret := e.scaReady(t, *now)
		a := e.scaQuote(t, qtBody(src, dst, "SENDING", 1000, "scaFactor", "TOTP"))
		b := e.scaQuote(t, qtBody(src, dst, "SENDING", 2000, "scaFactor", "TOTP"))
		if a["scaChallenge"].(map[string]any)["id"] == b["scaChallenge"].(map[string]any)["id"] {
			t.Fatal("two quotes share a challenge")
		}
		advance(30 * time.Second)
		code := scaTOTP(t, secret, *now)
		expect(t, e.do("POST", "/quotes/"+a["id"].(string)+"/authorize", cobj{"code": code, "factor": "TOTP"}), http.StatusOK, "")
		if got := e.do("GET", "/quotes/"+b["id"].(string), nil).JSON(t)["status"]; got != "PENDING_AUTHORIZATION" {
			t.Fatalf("authorizing one quote moved the other: %v", got)
		}
		// The same code again (same time step): a replay.
		r := e.do("POST", "/quotes/"+b["id"].(string)+"/authorize", cobj{"code": code, "factor": "TOTP"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if got := e.qtBalance(t, de, "USD"); got != 100000-1000 {
			t.Fatalf("balance %d", got)
		}
		// Another customer's TOTP code does not authorize this quote.
		other := e.scaCustomer(t, "FR")
		e.scaEnrolSMS(t, other)
		otherSecret := e.scaEnrolTOTP(t, other, *now)
		advance(30 * time.Second)
		r = e.do("POST", "/quotes/"+b["id"].(string)+"/authorize", cobj{"code": scaTOTP(t, otherSecret, *now), "factor": "TOTP"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		// An SMS proof when no SMS code was sent for this challenge.
		expect(t, e.do("POST", "/quotes/"+b["id"].(string)+"/authorize", cobj{"code": "123456", "factor": "SMS_OTP"}),
			http.StatusConflict, "CONFLICT")
		r = e.do("POST", "/quotes/"+b["id"].(string)+"/authorize", cobj{"code": scaTOTP(t, secret, *now), "factor": "TOTP"})
		expect(t, r, http.StatusOK, "")
		if got := e.qtBalance(t, de, "USD"); got != 100000-3000 {
			t.Fatalf("balance %d", got)
		}
		ds := e.scaDecisions(t, de)
		if !scaHasDecision(ds, "AUTHORIZATION", "REJECTED", "TOTP") || !scaHasDecision(ds, "AUTHORIZATION", "ISSUED", "TOTP") {
			t.Fatalf("decisions %v", ds)
		}
	})
}

// A cross-currency payout takes two challenges in sequence (the
// conversion, then the payout): after the first, the quote is still
// PENDING_AUTHORIZATION and carries the next scaChallenge.
func TestSCA_CrossCurrency_TwoChallenges_R_SCA_06(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, _ := e.scaClock(t)
		de, src, _, _ := e.scaReady(t, *now, "EUR")
		eur := e.qtAccountID(t, e.qtCustomer(t), "EUR")
		q := e.scaQuote(t, qtBody(src, eur, "SENDING", 5000))
		first := q["scaChallenge"].(map[string]any)
		if first["purpose"] != "CURRENCY_CONVERSION" || first["factor"] != "SMS_OTP" {
			t.Fatalf("first challenge %v", first)
		}
		auth := "/quotes/" + q["id"].(string) + "/authorize"
		r := e.do("POST", auth, cobj{"code": "123456"})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		next := m["scaChallenge"].(map[string]any)
		if m["status"] != "PENDING_AUTHORIZATION" || next["purpose"] != "PAYOUT" || next["id"] == first["id"] {
			t.Fatalf("after the first authorization: %v", m)
		}
		if got := e.qtBalance(t, de, "USD"); got != 100000 {
			t.Fatalf("balance %d after one of two authorizations", got)
		}
		r = e.do("POST", auth, cobj{"code": "123456"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "PROCESSING" || e.qtBalance(t, de, "USD") != 95000 {
			t.Fatalf("after the second: %s", r.Body)
		}
	})
}

// Realtime-funding quotes get their paymentInstructions only after
// authorization; the transaction shows them then too. R-QUOTE-31 (SCA
// part): a payment to the quote before authorization is refused and moves
// nothing; after it, the deposit moves the quote on without execute.
func TestSCA_RealtimeFunding_InstructionsAfterAuthorization_R_QUOTE_31(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, _ := e.scaClock(t)
		de, _, dst, _ := e.scaReady(t, *now)
		q := e.scaQuote(t, cobj{"source": cobj{"sourceType": "REALTIME_FUNDING", "customerId": de, "currency": "USD"},
			"destination": cobj{"destinationType": "ACCOUNT", "accountId": dst}, "lockedCurrencySide": "SENDING",
			"lockedCurrencyAmount": 2500})
		if q["paymentInstructions"] != nil || q["status"] != "PENDING_AUTHORIZATION" {
			t.Fatalf("instructions before authorization: %v", q)
		}
		if x := e.scaTxn(t, q["transactionId"].(string)); len(x["paymentInstructions"].([]any)) != 0 {
			t.Fatalf("transaction shows instructions before authorization: %v", x["paymentInstructions"])
		}
		send := cobj{"quoteId": q["id"], "currencyCode": "USD"}
		before := e.qtCounts(t)
		expect(t, e.do("POST", "/sandbox/send", send), http.StatusConflict, "CONFLICT")
		if e.qtCounts(t) != before {
			t.Fatal("a payment before authorization changed something")
		}
		r := e.do("POST", "/quotes/"+q["id"].(string)+"/authorize", cobj{"code": "123456"})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if list, _ := m["paymentInstructions"].([]any); m["status"] != "PENDING" || len(list) == 0 {
			t.Fatalf("authorized realtime-funding quote %v", m)
		}
		x := e.scaTxn(t, q["transactionId"].(string))
		if list, _ := x["paymentInstructions"].([]any); x["status"] != "PENDING" || len(list) == 0 {
			t.Fatalf("transaction %v", x)
		}
		expect(t, e.do("POST", "/sandbox/send", send), http.StatusOK, "")
		if got := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t)["status"]; got != "COMPLETED" {
			t.Fatalf("funded authorized quote %v", got)
		}
	})
}

// Exemptions are platform settings and are recorded: a low-value payout
// and one to a trusted beneficiary need no challenge (200, scaExemption),
// the stored decisions say which exemption applied.
func TestSCA_Exemptions(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, _ := e.scaClock(t)
		de, src, dst, _ := e.scaReady(t, *now)
		e.scaQuote(t, qtBody(src, dst, "SENDING", 500)) // no exemption configured yet
		r := e.do("PATCH", "/sca/settings", cobj{"lowValueExemption": cobj{"currency": "USD", "maxAmount": 1000}})
		expect(t, r, http.StatusOK, "")
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 500))
		if q["scaExemption"] != "LOW_VALUE" || q["scaChallenge"] != nil || q["status"] != "PENDING" {
			t.Fatalf("low-value quote %v", q)
		}
		if x := e.scaTxn(t, q["transactionId"].(string)); x["scaExemption"] != "LOW_VALUE" {
			t.Fatalf("exemption not recorded on the transaction: %v", x)
		}
		r = e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "PROCESSING" {
			t.Fatalf("exempt execute %s", r.Body)
		}
		e.scaQuote(t, qtBody(src, dst, "SENDING", 1001)) // above the limit

		ext := e.qtExternal(t, de, "12345678")
		base := eaCustomers + "/" + ext
		expect(t, e.do("POST", base+"/trust", nil), http.StatusOK, "")
		expect(t, e.do("POST", base+"/trust/confirm", cobj{"code": "123456"}), http.StatusOK, "")
		e.scaQuote(t, qtBody(src, ext, "SENDING", 2000)) // trusted, but not allowed yet
		expect(t, e.do("PATCH", "/sca/settings", cobj{"trustedBeneficiaryExemption": true}), http.StatusOK, "")
		q = e.qtQuote(t, qtBody(src, ext, "SENDING", 2000))
		if q["scaExemption"] != "TRUSTED_BENEFICIARY" || q["scaChallenge"] != nil {
			t.Fatalf("trusted-beneficiary quote %v", q)
		}
		if x := e.scaTxn(t, q["transactionId"].(string)); x["scaExemption"] != "TRUSTED_BENEFICIARY" {
			t.Fatalf("exemption not recorded on the transaction: %v", x)
		}
		settings := e.do("GET", "/sca/settings", nil).JSON(t)
		if settings["trustedBeneficiaryExemption"] != true || settings["lowValueExemption"] == nil {
			t.Fatalf("settings %v", settings)
		}
		ds := e.scaDecisions(t, de)
		n := 0
		for _, d := range ds {
			if d["kind"] == "EXEMPTION" && (d["reason"] == "LOW_VALUE" || d["reason"] == "TRUSTED_BENEFICIARY") {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("exemption decisions %d: %v", n, ds)
		}
		r = e.do("PATCH", "/sca/settings", cobj{"additionalRegions": []string{"germany"}, "lowValueExemption": cobj{"currency": "USD"}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		fe := fieldErrors(t, r)
		if _, ok := fe["additionalRegions[0]"]; !ok {
			t.Fatalf("%s", r.Body)
		}
		if _, ok := fe["lowValueExemption.maxAmount"]; !ok {
			t.Fatalf("%s", r.Body)
		}
	})
}

// R-IDEM-02 with SCA: a quote awaiting authorization replays as it was
// answered (202, one quote, one challenge); an authorization replays its
// answer and moves the money once.
func TestSCA_IdempotentQuoteAndAuthorize_R_VER_04(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, _ := e.scaClock(t)
		de, src, dst, _ := e.scaReady(t, *now)
		body := qtBody(src, dst, "SENDING", 1500)
		first := e.do("POST", "/quotes", body, withHeader("Idempotency-Key", "sca-q-1"))
		again := e.do("POST", "/quotes", body, withHeader("Idempotency-Key", "sca-q-1"))
		expect(t, first, http.StatusAccepted, "")
		expect(t, again, http.StatusAccepted, "")
		if first.JSON(t)["id"] != again.JSON(t)["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %s", again.Body)
		}
		auth := "/quotes/" + first.JSON(t)["id"].(string) + "/authorize"
		a1 := e.do("POST", auth, cobj{"code": "123456"}, withHeader("Idempotency-Key", "sca-a-1"))
		a2 := e.do("POST", auth, cobj{"code": "123456"}, withHeader("Idempotency-Key", "sca-a-1"))
		expect(t, a1, http.StatusOK, "")
		expect(t, a2, http.StatusOK, "")
		if a2.Header.Get("Idempotent-Replayed") != "true" || e.qtBalance(t, de, "USD") != 100000-1500 {
			t.Fatalf("authorize replay moved money again: %s", a2.Body)
		}
	})
}

// A payout the customer authorized but that could not execute (the
// account lacked the funds) stays PENDING_AUTHORIZATION for a retry; left
// so, it fails at its expiresAt with QUOTE_EXECUTION_FAILED, not
// SCA_NOT_COMPLETED, and moves nothing.
func TestSCA_AuthorizedButUnfunded(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		now, advance := e.scaClock(t)
		de, src, dst, _ := e.scaReady(t, *now)
		q := e.scaQuote(t, qtBody(src, dst, "SENDING", 200000))
		auth := "/quotes/" + q["id"].(string) + "/authorize"
		expect(t, e.do("POST", auth, cobj{"code": "123456"}), http.StatusBadRequest, "INSUFFICIENT_FUNDS")
		if got := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t)["status"]; got != "PENDING_AUTHORIZATION" {
			t.Fatalf("quote %v", got)
		}
		// Retried (no new proof needed: it is authorized): still unfunded.
		expect(t, e.do("POST", auth, cobj{"code": "000000"}), http.StatusBadRequest, "INSUFFICIENT_FUNDS")
		advance(6 * time.Minute)
		e.scaExpire(t)
		x := e.scaTxn(t, q["transactionId"].(string))
		if x["status"] != "FAILED" || x["failureReason"] != "QUOTE_EXECUTION_FAILED" || e.qtBalance(t, de, "USD") != 100000 {
			t.Fatalf("transaction %v %v", x["status"], x["failureReason"])
		}
	})
}
