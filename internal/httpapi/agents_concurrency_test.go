package httpapi

import (
	"net/http"
	"sync"
	"testing"
)

// An agent never exceeds its policy, however many requests it sends at
// once: twenty concurrent executions of USD 10.00 under a daily limit of
// USD 50.00 execute exactly five, and the money moved is exactly USD 50.00,
// on SQLite and PostgreSQL (the usage rows are counted in each execution's
// transaction, store.AddAgentUsage).
func TestAgents_ConcurrentExecutionsNeverPassTheDailyLimit(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the limit is per UTC day
		customer, _ := e.qtSetup(t, "USD", "EUR")
		usd, eur := e.qtAccountID(t, customer, "USD"), e.qtAccountID(t, customer, "EUR")
		e.acFund(t, usd, 1_000_000)
		policy := agPolicy(1_000_000, 1_000, 5_000, agAllPerms...)
		_, code := e.agCreate(t, customer, policy)
		a := e.agInstall(t, code)
		const n = 20
		ids := make([]string, n)
		for i := range ids {
			ids[i] = str(a.quote(t, usd, eur, 1_000), "id")
		}
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i, q := range ids {
			wg.Go(func() { statuses[i] = a.do("POST", "/agents/me/quotes/"+q+"/execute", nil).Status })
		}
		wg.Wait()
		executed := 0
		for i, st := range statuses {
			switch st {
			case http.StatusOK:
				executed++
			case http.StatusForbidden:
			default:
				t.Errorf("execution %d: status %d", i, st)
			}
		}
		if executed != 5 {
			t.Fatalf("%d executions passed a daily limit that allows 5", executed)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 1_000_000-5_000 {
			t.Fatalf("USD balance %d: the agent moved %d", got, 1_000_000-got)
		}
		me := a.must(t, http.StatusOK, "GET", "/agents/me", nil)
		usage := me["usage"].(map[string]any)
		if usage["dailySpend"] != float64(5_000) || usage["dailyTransactionCount"] != float64(5) {
			t.Fatalf("usage %v", usage)
		}
	})
}

// Many platform approvals of one action at once: exactly one executes, the
// others are 409 and the money moves once (R-AGENT-20).
func TestAgents_ConcurrentApprovalsExecuteOnce_R_AGENT_20(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer, _ := e.qtSetup(t, "USD", "EUR")
		usd, eur := e.qtAccountID(t, customer, "USD"), e.qtAccountID(t, customer, "EUR")
		e.acFund(t, usd, 100_000)
		agent, code := e.agCreate(t, customer, agPolicy(100, 50_000, 1_000_000, agAllPerms...))
		a := e.agInstall(t, code)
		act := a.execute(t, str(a.quote(t, usd, eur, 3_000), "id"))
		if act["status"] != "PENDING_APPROVAL" {
			t.Fatalf("action %v", act)
		}
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				statuses[i] = e.do("POST", "/agents/"+str(agent, "id")+"/actions/"+str(act, "id")+"/approve", nil).Status
			})
		}
		wg.Wait()
		ok := 0
		for i, st := range statuses {
			switch st {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
			default:
				t.Errorf("approval %d: status %d", i, st)
			}
		}
		if ok != 1 {
			t.Fatalf("%d approvals succeeded", ok)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 97_000 {
			t.Fatalf("USD balance %d after one approved USD 30.00 transfer", got)
		}
	})
}

// Purchase cards count against the policy like payments, atomically:
// twelve concurrent issuances of USD 10.00 under a daily limit of USD 50.00
// issue exactly five cards, on SQLite and PostgreSQL.
func TestAgents_ConcurrentCardIssuancesNeverPassTheDailyLimit(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the limit is per UTC day
		a, _, _, usd := e.agCardFixture(t, 0, agPolicy(1_000_000, 1_000, 5_000, agCardPerms...), true)
		const n = 12
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() { statuses[i] = a.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, usd)).Status })
		}
		wg.Wait()
		issued := 0
		for i, st := range statuses {
			switch st {
			case http.StatusCreated:
				issued++
			case http.StatusForbidden:
			default:
				t.Errorf("issuance %d: status %d", i, st)
			}
		}
		list := a.must(t, http.StatusOK, "GET", "/agents/me/cards", nil)
		usage := a.must(t, http.StatusOK, "GET", "/agents/me", nil)["usage"].(map[string]any)
		if issued != 5 || list["totalCount"] != float64(5) || usage["dailySpend"] != float64(5_000) {
			t.Fatalf("%d issued, %v listed, usage %v under a daily limit that allows 5", issued, list["totalCount"], usage)
		}
	})
}
