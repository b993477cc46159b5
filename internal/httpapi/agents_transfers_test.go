package httpapi

import (
	"net/http"
	"testing"
)

// R-AGENT-22: the deprecated transfer-out and transfer-in become
// TRANSFER_OUT and TRANSFER_IN actions with transferDetails, decided by the
// policy like quote executions, under CREATE_TRANSFERS.
func TestAgents_DeprecatedTransfers_R_AGENT_22(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, _, usd, _, agentID, a := agFixture(t, e, agPolicy(5000, 20_000, 1_000_000, "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"))
		ext := a.must(t, http.StatusCreated, "POST", "/agents/me/external-accounts", eaUSD("", "000123456789"))
		body := func(src, dst string, amount int64) cobj {
			return cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": dst}, "amount": amount}
		}
		act := a.must(t, http.StatusCreated, "POST", "/agents/me/transfer-out", body(usd, str(ext, "id"), 1_000))
		d, _ := act["transferDetails"].(map[string]any)
		if act["type"] != "TRANSFER_OUT" || act["status"] != "APPROVED" || act["quote"] != nil || d["amount"] != float64(1_000) ||
			d["currency"] != "USD" || d["destinationAccountId"] != str(ext, "id") || act["transaction"] == nil {
			t.Fatalf("transfer-out action %v", act)
		}
		big := a.must(t, http.StatusCreated, "POST", "/agents/me/transfer-out", body(usd, str(ext, "id"), 6_000))
		if big["status"] != "PENDING_APPROVAL" {
			t.Fatalf("large transfer-out %v", big["status"])
		}
		r := e.do("POST", "/agents/"+agentID+"/actions/"+str(big, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["status"] != "APPROVED" || m["transaction"] == nil {
			t.Fatalf("approved transfer-out %v", m)
		}
		// Transfer-in pulls from the external account (sandbox: settled at once).
		before := e.qtBalance(t, str(a.must(t, http.StatusOK, "GET", "/agents/me", nil), "customerId"), "USD")
		in := a.must(t, http.StatusCreated, "POST", "/agents/me/transfer-in", body(str(ext, "id"), usd, 2_000))
		if in["type"] != "TRANSFER_IN" || in["status"] != "APPROVED" || in["transaction"] == nil {
			t.Fatalf("transfer-in action %v", in)
		}
		if after := e.qtBalance(t, str(in, "customerId"), "USD"); after != before+2_000 {
			t.Fatalf("USD balance %d → %d after a transfer-in of 2000", before, after)
		}
		// Malformed: the directions are checked.
		expect(t, a.do("POST", "/agents/me/transfer-out", body(str(ext, "id"), usd, 1_000)), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/agents/me/transfer-in", body(usd, str(ext, "id"), 1_000)), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/agents/me/transfer-out", cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		// Without CREATE_TRANSFERS both are refused.
		expect(t, e.do("PATCH", "/agents/"+agentID+"/policy", cobj{"permissions": []string{"CREATE_QUOTES"}}), http.StatusOK, "")
		expect(t, a.do("POST", "/agents/me/transfer-out", body(usd, str(ext, "id"), 1_000)), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("POST", "/agents/me/transfer-in", body(str(ext, "id"), usd, 1_000)), http.StatusForbidden, "FORBIDDEN")
	})
}
