package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// R-AGENT-36, R-AGENT-24: the customer, its KYC link and its verification
// need MANAGE_IDENTITY and reach only the agent's customer.
func TestAgents_Identity_R_AGENT_36(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer, other, _, _, agentID, a := agFixture(t, e, agPolicy(5000, 20_000, 1_000_000, "MANAGE_IDENTITY"))
		c := a.must(t, http.StatusOK, "GET", "/agents/me/customer", nil)
		if str(c, "id") != customer {
			t.Fatalf("agent's customer %v", c["id"])
		}
		if got := a.must(t, http.StatusOK, "PATCH", "/agents/me/customer", cobj{"fullName": "Jane Agent-Doe"}); got["fullName"] != "Jane Agent-Doe" {
			t.Fatalf("patched %v", got["fullName"])
		}
		if got := e.do("GET", "/customers/"+customer, nil).JSON(t); got["fullName"] != "Jane Agent-Doe" {
			t.Fatalf("platform sees %v", got["fullName"])
		}
		link := a.must(t, http.StatusCreated, "POST", "/agents/me/kyc-link", nil)
		if !strings.Contains(str(link, "kycUrl"), "/kyc?token=") {
			t.Fatalf("kyc link %v", link)
		}
		r := a.do("POST", "/agents/me/verifications", cobj{})
		if r.Status != http.StatusOK {
			t.Fatalf("verification: %d %s", r.Status, r.Body)
		}
		expect(t, a.do("POST", "/agents/me/verifications", cobj{"customerId": other}), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		// Without MANAGE_IDENTITY every one is refused.
		expect(t, e.do("PATCH", "/agents/"+agentID+"/policy", cobj{"permissions": []string{"CREATE_QUOTES"}}), http.StatusOK, "")
		expect(t, a.do("GET", "/agents/me/customer", nil), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("PATCH", "/agents/me/customer", cobj{"fullName": "X"}), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("POST", "/agents/me/kyc-link", nil), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("POST", "/agents/me/verifications", cobj{}), http.StatusForbidden, "FORBIDDEN")
	})
}
