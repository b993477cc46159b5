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
		payload, rid := c.first("PATCH", path, body)
		if got := c.do("GET", path, nil).JSON(t)["email"]; got != "jane@example.com" {
			t.Fatalf("the first step changed the email to %v", got)
		}
		_, _, otherKey := e.wlLoggedInAnother(t)
		expect(t, c.retry("PATCH", path, body, otherKey, payload, rid), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		expect(t, c.retry("PATCH", path, cobj{"email": "x@example.com"}, key, payload, rid), http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
		r := c.retry("PATCH", path, body, key, payload, rid)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["email"] != "jane.new@example.com" {
			t.Fatalf("customer %s", r.Body)
		}
		list := c.do("GET", "/auth/credentials?accountId="+c.accountID, nil).JSON(t)["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["nickname"] != "jane.new@example.com" || list[0].(map[string]any)["id"] != cred["id"] {
			t.Fatalf("credentials after the change: %v", list)
		}
		// Another wallet's email cannot be taken.
		expect(t, c.do("PATCH", path, cobj{"email": "bob@example.com"}), http.StatusConflict, "EMAIL_OTP_EMAIL_ALREADY_EXISTS")
	})
}
