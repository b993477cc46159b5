package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// R-AGENT-01, R-AGENT-02, R-AGENT-03, R-AGENT-04, R-CONV-02, R-CONV-10:
// create, list, get, rename and delete; the policy round-trips.
func TestAgents_CRUD_R_AGENT_01_R_AGENT_02_R_AGENT_03_R_AGENT_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer := e.qtCustomer(t)
		policy := cobj{
			"permissions":          []string{"CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS", "MANAGE_CARDS", "MANAGE_IDENTITY", "RECEIVE_FUNDS"},
			"defaultExecutionMode": "APPROVAL_REQUIRED",
			"spendingLimits":       cobj{"currency": "USD", "perTransactionLimit": 50_000, "dailyLimit": 500_000, "dailyTransactionLimit": 10, "monthlyLimit": 5_000_000},
			"accountRestrictions":  cobj{"allowedAccountIds": []string{e.qtAccountID(t, customer, "USD")}, "accountRules": []any{}},
			"approvalThresholds":   cobj{"currency": "USD", "amount": 100_000},
		}
		agent, code := e.agCreate(t, customer, policy)
		id := str(agent, "id")
		// R-AGENT-01, R-CONV-02: an Agent: id and a device code.
		if !strings.HasPrefix(id, "Agent:") || len(id) != len("Agent:")+36 || code == "" {
			t.Fatalf("created %v, code %q", agent, code)
		}
		// R-AGENT-04: the policy round-trips.
		got := e.do("GET", "/agents/"+id, nil).JSON(t)
		p := got["policy"].(map[string]any)
		if p["defaultExecutionMode"] != "APPROVAL_REQUIRED" || len(p["permissions"].([]any)) != 6 ||
			p["spendingLimits"].(map[string]any)["dailyTransactionLimit"] != float64(10) ||
			p["approvalThresholds"].(map[string]any)["amount"] != float64(100_000) ||
			len(p["accountRestrictions"].(map[string]any)["allowedAccountIds"].([]any)) != 1 {
			t.Fatalf("policy %v", p)
		}
		// R-AGENT-03: rename.
		expect(t, e.do("PATCH", "/agents/"+id, cobj{"name": "Payroll"}), http.StatusOK, "")
		if n := e.do("GET", "/agents/"+id, nil).JSON(t)["name"]; n != "Payroll" {
			t.Fatalf("name after rename: %v", n)
		}
		expect(t, e.do("PATCH", "/agents/"+id, cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/agents/"+id, cobj{"name": ""}), http.StatusBadRequest, "INVALID_INPUT")
		// R-AGENT-02, R-CONV-10: list shape and filters.
		e.agCreate(t, customer, policy)
		l := e.do("GET", "/agents?customerId="+customer+"&isPaused=false&limit=1", nil).JSON(t)
		if l["totalCount"] != float64(2) || l["hasMore"] != true || len(l["data"].([]any)) != 1 {
			t.Fatalf("list %v", l)
		}
		l2 := e.do("GET", "/agents?limit=1&customerId="+customer+"&isPaused=false&cursor="+str(l, "nextCursor"), nil).JSON(t)
		if l2["hasMore"] != false || len(l2["data"].([]any)) != 1 {
			t.Fatalf("second page %v", l2)
		}
		if l := e.do("GET", "/agents?isConnected=true", nil).JSON(t); l["totalCount"] != float64(0) {
			t.Fatalf("connected agents before any redemption: %v", l["totalCount"])
		}
		expect(t, e.do("GET", "/agents?isPaused=maybe", nil), http.StatusBadRequest, "INVALID_INPUT")
		// R-AGENT-02: delete, then gone.
		expect(t, e.do("DELETE", "/agents/"+id, nil), http.StatusNoContent, "")
		expect(t, e.do("GET", "/agents/"+id, nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("DELETE", "/agents/"+id, nil), http.StatusNotFound, "NOT_FOUND")
		if l := e.do("GET", "/agents", nil).JSON(t); l["totalCount"] != float64(1) {
			t.Fatalf("list after delete: %v", l["totalCount"])
		}
	})
}

// R-AGENT-05, R-AGENT-06: PATCH policy changes only what it names, at once;
// the currency cannot change; a malformed policy is 400 and changes nothing.
func TestAgents_PolicyPatch_R_AGENT_05_R_AGENT_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, _, usd, eur, agentID, a := agFixture(t, e, agPolicy(100_000, 20_000, 1_000_000, agAllPerms...))
		path := "/agents/" + agentID + "/policy"
		before := e.do("GET", "/agents/"+agentID, nil).JSON(t)["policy"]
		// R-AGENT-06: another currency is 400, nothing changes.
		expect(t, e.do("PATCH", path, cobj{"spendingLimits": cobj{"currency": "EUR"}}), http.StatusBadRequest, "INVALID_INPUT")
		// Malformed policies: 400 with every field named, nothing changes.
		r := e.do("PATCH", path, cobj{"permissions": []string{"FLY"}, "defaultExecutionMode": "SOMETIMES",
			"spendingLimits": cobj{"perTransactionLimit": -1}, "approvalThresholds": cobj{"amount": 5},
			"accountRestrictions": cobj{"allowedAccountIds": []string{"nope"}}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		fields := fieldErrors(t, r)
		for _, f := range []string{"permissions[0]", "defaultExecutionMode", "spendingLimits.perTransactionLimit",
			"approvalThresholds.currency", "accountRestrictions.allowedAccountIds[0]"} {
			if _, ok := fields[f]; !ok {
				t.Errorf("no error for %s: %v", f, fields)
			}
		}
		expect(t, e.do("PATCH", path, cobj{"spendingLimits": cobj{"dailyLimit": "lots"}}), http.StatusBadRequest, "INVALID_INPUT")
		if after := e.do("GET", "/agents/"+agentID, nil).JSON(t)["policy"]; fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("refused PATCHes changed the policy: %v → %v", before, after)
		}
		// R-AGENT-05: one field changes, the others stay; the agent's next
		// request obeys it.
		r = e.do("PATCH", path, cobj{"defaultExecutionMode": "APPROVAL_REQUIRED"})
		expect(t, r, http.StatusOK, "")
		p := r.JSON(t)["policy"].(map[string]any)
		if p["defaultExecutionMode"] != "APPROVAL_REQUIRED" || p["spendingLimits"].(map[string]any)["perTransactionLimit"] != float64(20_000) ||
			len(p["permissions"].([]any)) != len(agAllPerms) {
			t.Fatalf("policy after a partial PATCH: %v", p)
		}
		// R-AGENT-14: APPROVAL_REQUIRED sends even a small amount for approval.
		if act := a.execute(t, str(a.quote(t, usd, eur, 500), "id")); act["status"] != "PENDING_APPROVAL" {
			t.Fatalf("action under APPROVAL_REQUIRED: %v", act["status"])
		}
		// null removes the daily limit; the same currency may be restated.
		r = e.do("PATCH", path, cobj{"spendingLimits": cobj{"currency": "USD", "dailyLimit": nil}, "defaultExecutionMode": "AUTO"})
		expect(t, r, http.StatusOK, "")
		if l := r.JSON(t)["policy"].(map[string]any)["spendingLimits"].(map[string]any); l["dailyLimit"] != nil || l["perTransactionLimit"] != float64(20_000) {
			t.Fatalf("limits %v", l)
		}
		if act := a.execute(t, str(a.quote(t, usd, eur, 500), "id")); act["status"] != "APPROVED" {
			t.Fatalf("action back under AUTO: %v", act["status"])
		}
		// Account restrictions: a source the policy does not allow is 403.
		expect(t, e.do("PATCH", path, cobj{"accountRestrictions": cobj{"allowedAccountIds": []string{eur}}}), http.StatusOK, "")
		expect(t, a.do("POST", "/agents/me/quotes", qtBody(usd, eur, "SENDING", 100)), http.StatusForbidden, "FORBIDDEN")
	})
}

// Creation refuses a malformed policy or an unknown customer and stores
// nothing.
func TestAgents_CreateRefusesBadInput(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer := e.qtCustomer(t)
		r := e.do("POST", "/agents", cobj{"name": "x", "customerId": customer, "policy": cobj{"permissions": []string{}}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		fields := fieldErrors(t, r)
		for _, f := range []string{"policy.defaultExecutionMode", "policy.spendingLimits"} {
			if _, ok := fields[f]; !ok {
				t.Errorf("no error for %s: %v", f, fields)
			}
		}
		expect(t, e.do("POST", "/agents", cobj{"name": "x", "customerId": "Customer:nope", "policy": agPolicy(1, 1, 1, "CREATE_QUOTES")}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/agents", cobj{"name": "x", "customerId": "Customer:0199a1b2-0000-7000-8000-000000000000", "policy": agPolicy(1, 1, 1, "CREATE_QUOTES")}), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("POST", "/agents", cobj{"name": "x", "customerId": customer, "policy": cwith(agPolicy(1, 1, 1, "CREATE_QUOTES"), "spendingLimits", cobj{"currency": "XXX", "perTransactionLimit": 1})}), http.StatusBadRequest, "INVALID_INPUT")
		if l := e.do("GET", "/agents", nil).JSON(t); l["totalCount"] != float64(0) {
			t.Fatalf("refused creations stored agents: %v", l["totalCount"])
		}
	})
}

// R-AGENT-10, R-AGENT-11, R-AGENT-12, R-AGENT-13, R-AGENT-21, R-AGENT-22,
// R-CONV-12, R-CONV-14: the approvals list and its filters.
func TestAgents_Approvals_R_AGENT_10_R_AGENT_11_R_AGENT_12_R_AGENT_13(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		move := e.acClock(t, time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC))
		customer, other, usd, eur, agentID, a := agFixture(t, e, agPolicy(100, 20_000, 10_000_000, agAllPerms...))
		otherUSD, otherEUR := e.qtAccountID(t, other, "USD"), e.qtAccountID(t, other, "EUR")
		e.acFund(t, otherUSD, 100_000)
		other2, code := e.agCreate(t, other, agPolicy(100, 20_000, 10_000_000, agAllPerms...))
		b := e.agInstall(t, code)
		var mine []string
		for i := range 22 {
			move(time.Date(2026, 11, 20, 12, 0, i, 0, time.UTC))
			mine = append(mine, str(a.execute(t, str(a.quote(t, usd, eur, 200), "id")), "id"))
		}
		at := time.Date(2026, 11, 20, 12, 1, 0, 0, time.UTC)
		move(at)
		theirs := str(b.execute(t, str(b.quote(t, otherUSD, otherEUR, 200), "id")), "id")
		// An action executed at once is no approval request.
		expect(t, e.do("PATCH", "/agents/"+agentID+"/policy", cobj{"approvalThresholds": cobj{"amount": nil}}), http.StatusOK, "")
		a.execute(t, str(a.quote(t, usd, eur, 200), "id"))

		list := func(q string) map[string]any {
			t.Helper()
			r := e.do("GET", "/agents/approvals?"+q, nil)
			expect(t, r, http.StatusOK, "")
			return r.JSON(t)
		}
		// R-AGENT-11: default 20, limit=100 accepted.
		if l := list(""); len(l["data"].([]any)) != 20 || l["totalCount"] != float64(23) || l["hasMore"] != true {
			t.Fatalf("default page: %d items, total %v", len(l["data"].([]any)), l["totalCount"])
		}
		if l := list("limit=100"); len(l["data"].([]any)) != 23 {
			t.Fatalf("limit=100: %d", len(l["data"].([]any)))
		}
		// R-AGENT-13: 400 for a bad limit, 401 without credentials.
		for _, bad := range []string{"limit=0", "limit=101", "sortOrder=up", "startDate=yesterday"} {
			expect(t, e.do("GET", "/agents/approvals?"+bad, nil), http.StatusBadRequest, "INVALID_INPUT")
		}
		expect(t, e.do("GET", "/agents/approvals", nil, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
		// R-AGENT-10: filters by agent and customer; desc by default, asc on
		// request; R-CONV-12: the cursor walks every page.
		l := list("agentId=" + agentID + "&sortOrder=asc&limit=10")
		var seen []string
		for {
			for _, d := range l["data"].([]any) {
				act := d.(map[string]any)
				// R-AGENT-21, R-AGENT-22: fields and enums.
				if act["agentId"] != agentID || act["customerId"] != customer || act["type"] != "EXECUTE_QUOTE" ||
					act["status"] != "PENDING_APPROVAL" || act["quote"] == nil || str(act, "platformCustomerId") == "" {
					t.Fatalf("approval %v", act)
				}
				seen = append(seen, str(act, "id"))
			}
			if l["hasMore"] != true {
				break
			}
			l = list("agentId=" + agentID + "&sortOrder=asc&limit=10&cursor=" + str(l, "nextCursor"))
		}
		if strings.Join(seen, ",") != strings.Join(mine, ",") {
			t.Fatalf("agent's approvals in order: %v, want %v", seen, mine)
		}
		if l := list("customerId=" + other); l["totalCount"] != float64(1) || str(l["data"].([]any)[0].(map[string]any), "id") != theirs {
			t.Fatalf("customer filter: %v", l)
		}
		if first := list("limit=1")["data"].([]any)[0].(map[string]any); str(first, "id") != theirs {
			t.Fatalf("newest first: %v", first["id"])
		}
		// R-AGENT-12: the end date is inclusive; a date alone is its day.
		end := at.Format(time.RFC3339)
		if l := list("endDate=" + end + "&startDate=" + end); l["totalCount"] != float64(1) {
			t.Fatalf("action created exactly at the bounds: %v", l["totalCount"])
		}
		if l := list("startDate=2026-11-20&endDate=2026-11-20"); l["totalCount"] != float64(23) {
			t.Fatalf("the whole day: %v", l["totalCount"])
		}
		if l := list("endDate=2026-11-19"); l["totalCount"] != float64(0) {
			t.Fatalf("the day before: %v", l["totalCount"])
		}
		_ = other2
	})
}
