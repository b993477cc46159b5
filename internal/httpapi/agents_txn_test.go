package httpapi

import (
	"net/http"
	"testing"
)

// R-TXN-38: the transaction of a quote an agent executed carries agentId,
// on GET /transactions/{id}, in the list and in its webhook data, whether it
// executed at once or after the platform's approval; a transaction the
// platform executed has none.
func TestTransactions_AgentID_R_TXN_38(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer, _ := e.qtSetup(t, "USD", "EUR")
		usd, eur := e.qtAccountID(t, customer, "USD"), e.qtAccountID(t, customer, "EUR")
		e.acFund(t, usd, 100_000)
		agent, code := e.agCreate(t, customer, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		agentID := str(agent, "id")
		a := e.agInstall(t, code)

		atOnce := a.quote(t, usd, eur, 1_000)
		a.execute(t, str(atOnce, "id"))
		large := a.quote(t, usd, eur, 6_000)
		pending := a.execute(t, str(large, "id"))
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(pending, "id")+"/approve", nil), http.StatusOK, "")
		platform := e.qtQuote(t, qtBody(usd, eur, "SENDING", 500))
		expect(t, e.do("POST", "/quotes/"+str(platform, "id")+"/execute", nil), http.StatusOK, "")

		want := map[string]string{str(atOnce, "transactionId"): agentID, str(large, "transactionId"): agentID,
			str(platform, "transactionId"): ""}
		for txID, w := range want {
			// R-TXN-38: GET /transactions/{id}.
			got := e.do("GET", "/transactions/"+txID, nil)
			expect(t, got, http.StatusOK, "")
			if g, _ := got.JSON(t)["agentId"].(string); g != w {
				t.Fatalf("transaction %s agentId %q, want %q", txID, g, w)
			}
			// R-TXN-38: the webhook data of each of its events.
			evs := e.acEvents(t, txID)
			if len(evs) == 0 {
				t.Fatalf("transaction %s emitted no event", txID)
			}
			for _, ev := range evs {
				data, _ := ev["data"].(map[string]any)
				if g, _ := data["agentId"].(string); g != w {
					t.Fatalf("event %v of %s: agentId %q, want %q", ev["type"], txID, g, w)
				}
			}
		}
		// R-TXN-38: the list.
		seen := 0
		for _, x := range e.do("GET", "/transactions?customerId="+customer+"&type=OUTGOING", nil).JSON(t)["data"].([]any) {
			m := x.(map[string]any)
			if w, ok := want[str(m, "id")]; ok {
				seen++
				if str(m, "agentId") != w {
					t.Fatalf("listed transaction %s agentId %v, want %q", str(m, "id"), m["agentId"], w)
				}
			}
		}
		if seen != len(want) {
			t.Fatalf("the list showed %d of the %d transactions", seen, len(want))
		}
	})
}
