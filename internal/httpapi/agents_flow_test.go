package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The "Done when", tried as a new user would with a scripted agent:
// create an agent whose policy wants approval above USD 50.00, install it,
// list accounts, quote and execute a small transfer (executed at once), a
// large one (approved, executes), one the platform rejects, one approved
// after its quote expired, an external account; a paused agent is refused
// everywhere and an over-limit request moves no money. (Purchase cards and
// deposits are not part of this branch.)
func TestAgents_DoneWhen_ScriptedAgent(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		move := e.acClock(t, time.Now().UTC())
		start := e.db.Now()
		customer, other := e.qtSetup(t, "USD", "EUR")
		usd, eur := e.qtAccountID(t, customer, "USD"), e.qtAccountID(t, customer, "EUR")
		e.acFund(t, usd, 100_000)

		// R-AGENT-01: POST /agents returns the agent and a device code.
		agent, code := e.agCreate(t, customer, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		agentID := str(agent, "id")
		if !strings.HasPrefix(agentID, "Agent:") || code == "" || agent["isConnected"] != false {
			t.Fatalf("created agent %v code %q", agent, code)
		}
		// R-AUTH-09: redeem needs no platform credentials.
		a := e.agInstall(t, code)
		// R-AUTH-07, R-AGENT-25: the bearer token reaches /agents/me.
		me := a.must(t, http.StatusOK, "GET", "/agents/me", nil)
		if str(me, "id") != agentID || me["isConnected"] != true {
			t.Fatalf("GET /agents/me: %v", me)
		}
		// R-AGENT-26: only the agent's customer's accounts.
		for _, acc := range a.must(t, http.StatusOK, "GET", "/agents/me/internal-accounts", nil)["data"].([]any) {
			if c := str(acc.(map[string]any), "customerId"); c != customer {
				t.Fatalf("internal account of %s listed to %s's agent", c, customer)
			}
		}

		// R-AGENT-29, R-AGENT-33: a small transfer executes at once.
		small := a.quote(t, usd, eur, 1_000)
		act := a.execute(t, str(small, "id"))
		if act["status"] != "APPROVED" || act["transaction"] == nil || act["type"] != "EXECUTE_QUOTE" {
			t.Fatalf("small transfer action: %v", act)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 99_000 {
			t.Fatalf("USD balance after the small transfer: %d", got)
		}
		// R-AGENT-32: the agent reads its quote.
		a.must(t, http.StatusOK, "GET", "/agents/me/quotes/"+str(small, "id"), nil)

		// R-AGENT-14: above the threshold the action waits for approval.
		large := a.quote(t, usd, eur, 6_000)
		pending := a.execute(t, str(large, "id"))
		if pending["status"] != "PENDING_APPROVAL" || pending["transaction"] != nil {
			t.Fatalf("large transfer action: %v", pending)
		}
		// R-AGENT-16: a quote action expires with its quote.
		if pending["expiresAt"] != large["expiresAt"] {
			t.Fatalf("action expiresAt %v, quote expiresAt %v", pending["expiresAt"], large["expiresAt"])
		}
		if e.qtBalance(t, customer, "USD") != 99_000 {
			t.Fatal("a PENDING_APPROVAL action moved money")
		}
		agEventTypes(t, e, str(pending, "id"), "AGENT_ACTION.PENDING_APPROVAL")
		// R-AGENT-10: the platform sees it among the approvals of the agent.
		list := e.do("GET", "/agents/approvals?agentId="+agentID, nil).JSON(t)
		if !agListHas(list, str(pending, "id")) {
			t.Fatalf("approvals list lacks %s: %v", str(pending, "id"), list)
		}
		// R-AGENT-17: approving executes it.
		r := e.do("POST", "/agents/"+agentID+"/actions/"+str(pending, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["status"] != "APPROVED" || m["transaction"] == nil {
			t.Fatalf("approved action: %v", m)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 93_000 {
			t.Fatalf("USD balance after the approved transfer: %d", got)
		}
		agEventTypes(t, e, str(pending, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.APPROVED")
		// R-AGENT-20: a decided action cannot be decided again.
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(pending, "id")+"/approve", nil), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(pending, "id")+"/reject", nil), http.StatusConflict, "CONFLICT")

		// R-AGENT-19: a rejected action executes nothing.
		rejected := a.quote(t, usd, eur, 7_000)
		ra := a.execute(t, str(rejected, "id"))
		r = e.do("POST", "/agents/"+agentID+"/actions/"+str(ra, "id")+"/reject", cobj{"reason": "not this month"})
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["status"] != "REJECTED" || m["rejectionReason"] != "not this month" || m["transaction"] != nil {
			t.Fatalf("rejected action: %v", m)
		}
		if q := e.do("GET", "/quotes/"+str(rejected, "id"), nil).JSON(t); q["status"] != "PENDING" {
			t.Fatalf("rejected action's quote: %v", q["status"])
		}
		agEventTypes(t, e, str(ra, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.REJECTED")

		// R-AGENT-18: approved after its quote expired: FAILED, no new quote.
		late := a.quote(t, usd, eur, 8_000)
		la := a.execute(t, str(late, "id"))
		move(start.Add(10 * time.Minute))
		quotesBefore := e.qtCounts(t)
		r = e.do("POST", "/agents/"+agentID+"/actions/"+str(la, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["status"] != "FAILED" || m["failureReason"] != "QUOTE_EXPIRED" || m["transaction"] != nil {
			t.Fatalf("late approval: %v", m)
		}
		if after := e.qtCounts(t); after != quotesBefore {
			t.Fatalf("a late approval changed quotes or money: %s → %s", quotesBefore, after)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 93_000 {
			t.Fatalf("USD balance after the late approval: %d", got)
		}
		agEventTypes(t, e, str(la, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.FAILED")

		// R-AGENT-34: an external account, customerId omitted.
		ext := a.must(t, http.StatusCreated, "POST", "/agents/me/external-accounts", eaUSD("", "000123456789"))
		if str(ext, "customerId") != customer {
			t.Fatalf("agent's external account belongs to %v", ext["customerId"])
		}
		a.must(t, http.StatusOK, "GET", "/agents/me/external-accounts/"+str(ext, "id"), nil)

		// An over-limit request never moves money (perTransactionLimit 200.00).
		big := a.quote(t, usd, eur, 25_000)
		before := e.qtCounts(t)
		expect(t, a.do("POST", "/agents/me/quotes/"+str(big, "id")+"/execute", nil), http.StatusForbidden, "FORBIDDEN")
		if after := e.qtCounts(t); after != before {
			t.Fatalf("an over-limit execution changed state: %s → %s", before, after)
		}

		// R-AGENT-28: another customer's transaction is 404 to the agent.
		otherUSD := e.qtAccountID(t, other, "USD")
		e.acFund(t, otherUSD, 5_000)
		otherTx := e.acTransactions(t, "customerId="+other)
		if len(otherTx) == 0 {
			t.Fatal("the other customer has no transaction")
		}
		expect(t, a.do("GET", "/agents/me/transactions/"+str(otherTx[0], "id"), nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		a.must(t, http.StatusOK, "GET", "/agents/me/transactions/"+str(act["transaction"].(map[string]any), "id"), nil)

		// R-AGENT-03: a paused agent is refused everywhere.
		expect(t, e.do("PATCH", "/agents/"+agentID, cobj{"isPaused": true}), http.StatusOK, "")
		for _, p := range []string{"/agents/me", "/agents/me/internal-accounts", "/agents/me/actions", "/agents/me/transactions"} {
			expect(t, a.do("GET", p, nil), http.StatusForbidden, "FORBIDDEN")
		}
		again := str(small, "id")
		expect(t, a.do("POST", "/agents/me/quotes/"+again+"/execute", nil), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("POST", "/agents/me/quotes", qtBody(usd, eur, "SENDING", 100)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("PATCH", "/agents/"+agentID, cobj{"isPaused": false}), http.StatusOK, "")
		a.must(t, http.StatusOK, "GET", "/agents/me", nil)

		// R-AGENT-27: the agent's actions, listed and fetched.
		acts := a.must(t, http.StatusOK, "GET", "/agents/me/actions", nil)
		if acts["totalCount"] != float64(4) {
			t.Fatalf("agent actions: %v", acts["totalCount"])
		}
		a.must(t, http.StatusOK, "GET", "/agents/me/actions/"+str(la, "id"), nil)
	})
}

// agEventTypes checks the events emitted for an action, in order.
func agEventTypes(t *testing.T, e *env, actionID string, want ...string) {
	t.Helper()
	evs, err := e.db.Read().EventsForCustomer(context.Background(), e.acTenant(), actionID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Type)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events of %s: %v, want %v", actionID, got, want)
	}
}

func agListHas(list map[string]any, id string) bool {
	data, _ := list["data"].([]any)
	for _, d := range data {
		if str(d.(map[string]any), "id") == id {
			return true
		}
	}
	return false
}
