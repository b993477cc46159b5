package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/scapasskey/scapasskeytest"
)

const scaOrigin = "https://app.example.com"

func scaRaw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PASSKEY factors (a software authenticator plays the device): enrolment
// needs the platform's relying party; one passkey per customer; login and
// payout authorization by assertion. The payout challenge's WebAuthn
// challenge is the payout's binding, so an assertion for one quote does not
// authorize another; an assertion from a disallowed origin is refused and
// counts toward the lock; neither moves money.
func TestSCA_Passkey_EnrolLoginAuthorize(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		e.scaClock(t)
		e.acSupport(t, "USD")
		e.qtWebhook(t)
		de, payee := e.scaCustomer(t, "DE"), e.qtCustomer(t)
		src, dst := e.qtAccountID(t, de, "USD"), e.qtAccountID(t, payee, "USD")
		e.acFund(t, src, 10000)
		e.scaEnrolSMS(t, de)
		expect(t, e.do("POST", scaPath("/sca/factors", de), cobj{"type": "PASSKEY"}), http.StatusConflict, "CONFLICT")
		r := e.do("PATCH", "/sca/settings", cobj{"passkeyRelyingPartyId": "app.example.com", "passkeyAllowedOrigins": []string{"ftp://x"}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/sca/settings", cobj{"passkeyRelyingPartyId": "app.example.com",
			"passkeyAllowedOrigins": []string{scaOrigin}}), http.StatusOK, "")

		dev, err := scapasskeytest.New()
		if err != nil {
			t.Fatal(err)
		}
		r = e.do("POST", scaPath("/sca/factors", de), cobj{"type": "PASSKEY"})
		expect(t, r, http.StatusOK, "")
		start := r.JSON(t)
		if start["relyingPartyId"] != "app.example.com" {
			t.Fatalf("enrol start %v", start)
		}
		cred, err := dev.Register(scaRaw(t, start["options"]), scaOrigin)
		if err != nil {
			t.Fatal(err)
		}
		r = e.do("POST", scaPath("/sca/factors/confirm", de), cobj{"type": "PASSKEY", "origin": "https://evil.example", "credential": cred})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		r = e.do("POST", scaPath("/sca/factors/confirm", de), cobj{"type": "PASSKEY", "origin": scaOrigin, "credential": cred})
		expect(t, r, http.StatusOK, "")
		if f := r.JSON(t)["factor"].(map[string]any); f["factor"] != "PASSKEY" {
			t.Fatalf("confirmed %v", f)
		}
		expect(t, e.do("POST", scaPath("/sca/factors", de), cobj{"type": "PASSKEY"}), http.StatusConflict, "PASSKEY_ALREADY_ENROLLED")

		// Login by passkey.
		r = e.do("POST", scaPath("/sca/login/start", de), cobj{"factor": "PASSKEY"})
		expect(t, r, http.StatusOK, "")
		assertion, err := dev.Assert(scaRaw(t, r.JSON(t)["passkeyOptions"]), scaOrigin)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("POST", scaPath("/sca/login/complete", de), cobj{"factor": "PASSKEY", "passkeyAssertion": assertion,
			"origin": scaOrigin, "endUserIpAddress": "203.0.113.42"}), http.StatusOK, "")

		// Two payouts by passkey: each assertion signs its own quote's binding.
		a := e.scaQuote(t, qtBody(src, dst, "SENDING", 1000, "scaFactor", "PASSKEY"))
		b := e.scaQuote(t, qtBody(src, dst, "SENDING", 2000, "scaFactor", "PASSKEY"))
		chA := a["scaChallenge"].(map[string]any)
		if chA["factor"] != "PASSKEY" || len(chA["passkeyAllowedOrigins"].([]any)) != 1 {
			t.Fatalf("challenge %v", chA)
		}
		forA, err := dev.Assert(scaRaw(t, chA["passkeyAssertionOptions"]), scaOrigin)
		if err != nil {
			t.Fatal(err)
		}
		// A's assertion does not authorize B (dynamic linking).
		r = e.do("POST", "/quotes/"+b["id"].(string)+"/authorize", cobj{"passkeyAssertion": forA, "origin": scaOrigin})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		// An assertion made on a disallowed origin is refused.
		evil, _ := dev.Assert(scaRaw(t, chA["passkeyAssertionOptions"]), "https://evil.example")
		r = e.do("POST", "/quotes/"+a["id"].(string)+"/authorize", cobj{"passkeyAssertion": evil, "origin": "https://evil.example"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if got := e.qtBalance(t, de, "USD"); got != 10000 {
			t.Fatalf("refused assertions moved money: %d", got)
		}
		r = e.do("POST", "/quotes/"+a["id"].(string)+"/authorize", cobj{"passkeyAssertion": forA, "origin": scaOrigin})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "PROCESSING" || e.qtBalance(t, de, "USD") != 9000 {
			t.Fatalf("passkey-authorized payout %s", r.Body)
		}
		forB, _ := dev.Assert(scaRaw(t, b["scaChallenge"].(map[string]any)["passkeyAssertionOptions"]), scaOrigin)
		expect(t, e.do("POST", "/quotes/"+b["id"].(string)+"/authorize", cobj{"passkeyAssertion": forB, "origin": scaOrigin}), http.StatusOK, "")
		if got := e.qtBalance(t, de, "USD"); got != 7000 {
			t.Fatalf("balance %d", got)
		}
		if !scaHasDecision(e.scaDecisions(t, de), "AUTHORIZATION", "APPROVED", "PASSKEY") {
			t.Fatal("no stored passkey approval")
		}
	})
}
