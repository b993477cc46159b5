package httpapi

import (
	"net/http"
	"testing"
)

// R-AUTH-13: changing the email of a customer whose wallet holds an
// EMAIL_OTP credential is a signed retry; the credential and the customer
// change together; a stranger's stamp changes neither. Without tied
// credentials the change is immediate.
func TestWallets_ContactUpdate_R_AUTH_13(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, cred, _, key := e.wlLoggedIn(t)
		owner := e.wlOwner(t, c)
		path := "/customers/" + owner
		// The phone number has no tied credential: immediate.
		expect(t, c.do("PATCH", path, cobj{"phoneNumber": "+14155559876"}), http.StatusOK, "")
		body := cobj{"email": "jane.new@example.com"}
		// R-CUST-19: an unsigned email change with an EMAIL_OTP credential
		// is 202 with payloadToSign, requestId and expiresAt (c.first checks).
		payload, rid := c.first("PATCH", path, body)
		if got := c.do("GET", path, nil).JSON(t)["email"]; got != "jane@example.com" { // R-CUST-22
			t.Fatalf("the first step changed the email to %v", got)
		}
		_, _, otherKey := e.wlLoggedInAnother(t)
		expect(t, c.retry("PATCH", path, body, otherKey, payload, rid), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		expect(t, c.retry("PATCH", path, cobj{"email": "x@example.com"}, key, payload, rid), http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
		if got := c.do("GET", path, nil).JSON(t)["email"]; got != "jane@example.com" { // R-CUST-22
			t.Fatalf("a refused retry changed the email to %v", got)
		}
		r := c.retry("PATCH", path, body, key, payload, rid)
		expect(t, r, http.StatusOK, "") // R-CUST-21
		if r.JSON(t)["email"] != "jane.new@example.com" {
			t.Fatalf("customer %s", r.Body)
		}
		if got := c.do("GET", path, nil).JSON(t)["email"]; got != "jane.new@example.com" { // R-CUST-21, R-CUST-22
			t.Fatalf("email on GET after the retry: %v", got)
		}
		list := c.do("GET", "/auth/credentials?accountId="+c.accountID, nil).JSON(t)["data"].([]any)
		// R-CUST-22: the tied credential changed with the customer.
		if len(list) != 1 || list[0].(map[string]any)["nickname"] != "jane.new@example.com" || list[0].(map[string]any)["id"] != cred["id"] {
			t.Fatalf("credentials after the change: %v", list)
		}
		// Another wallet's email cannot be taken.
		expect(t, c.do("PATCH", path, cobj{"email": "bob@example.com"}), http.StatusConflict, "EMAIL_OTP_EMAIL_ALREADY_EXISTS")
	})
}

// R-CUST-20, R-CUST-21, R-CUST-22: with an SMS_OTP credential, changing
// phoneNumber is a signed retry too: 202 first, the phone and the credential
// unchanged until the signed retry answers 200.
func TestWallets_PhoneUpdate_R_CUST_20(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		path := "/customers/" + e.wlOwner(t, c)
		expect(t, c.do("PATCH", path, cobj{"phoneNumber": "+14155559876"}), http.StatusOK, "") // no SMS_OTP yet: immediate
		r := c.signed("POST", "/auth/credentials", cobj{"type": "SMS_OTP", "accountId": c.accountID}, key)
		expect(t, r, http.StatusCreated, "")
		sms := r.JSON(t)
		body := cobj{"phoneNumber": "+14155550123"}
		payload, rid := c.first("PATCH", path, body)                                     // R-CUST-20: 202 with payloadToSign, requestId, expiresAt
		if got := c.do("GET", path, nil).JSON(t)["phoneNumber"]; got != "+14155559876" { // R-CUST-22
			t.Fatalf("the first step changed the phone number to %v", got)
		}
		expect(t, c.retry("PATCH", path, body, key, payload, rid), http.StatusOK, "")    // R-CUST-21
		if got := c.do("GET", path, nil).JSON(t)["phoneNumber"]; got != "+14155550123" { // R-CUST-21, R-CUST-22
			t.Fatalf("phone number on GET after the retry: %v", got)
		}
		list := c.do("GET", "/auth/credentials?accountId="+c.accountID, nil).JSON(t)["data"].([]any)
		for _, x := range list {
			m := x.(map[string]any)
			if m["id"] == sms["id"] && m["nickname"] != "+14155550123" { // R-CUST-22
				t.Fatalf("SMS_OTP credential after the change: %v", m)
			}
		}
	})
}
