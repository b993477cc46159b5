package httpapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// R-AGENT-30, R-AGENT-31: a CHAIN_ADDRESS quote sends USDB and carries
// minimumReceivingAmount; it is priced again at execution, and when the
// price moved (here the platform raised its fees) the action fails with
// PRICE_MOVED and nothing is sent; at the old price it executes.
func TestAgents_ChainAddressQuotes_R_AGENT_30_R_AGENT_31(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD", "EUR", "USDB")
		customer, _, usd, _, agentID, a := agFixture(t, e, agPolicy(1_000_000, 100_000, 10_000_000, agAllPerms...))
		address := walletsig.EncodeSparkAddress("spark", mustCompressed(t))
		chain := func(amount int64, extra ...any) cobj {
			return cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": usd},
				"destination":        cwith(cobj{"destinationType": "CHAIN_ADDRESS", "address": address}, extra...),
				"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount}
		}
		q := a.must(t, http.StatusCreated, "POST", "/agents/me/quotes", chain(5_000))
		dest := q["destination"].(map[string]any)
		if dest["destinationType"] != "CHAIN_ADDRESS" || dest["address"] != address ||
			q["receivingCurrency"].(map[string]any)["code"] != "USDB" || q["minimumReceivingAmount"] != q["totalReceivingAmount"] {
			t.Fatalf("chain quote %v", q)
		}
		// A minimum above what the quote delivers is refused; bad input is 400.
		expect(t, a.do("POST", "/agents/me/quotes", chain(5_000, "minimumReceivingAmount", 1<<40)), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/agents/me/quotes", chain(5_000, "address", "")), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/agents/me/quotes", chain(5_000, "address", "not-an-address")), http.StatusBadRequest, "INVALID_INPUT")

		// The platform raises its fees: priced now, the quote delivers less.
		fee := func(bps int) string {
			return fmt.Sprintf(`{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":%d,"fixedFee":{"amount":0,"currency":"USD"}}]}`, bps)
		}
		expect(t, e.do("PATCH", "/config", fee(500)), http.StatusOK, "")
		act := a.execute(t, str(q, "id"))
		if act["status"] != "FAILED" || act["failureReason"] != "PRICE_MOVED" || act["transaction"] != nil {
			t.Fatalf("action after the price moved: %v", act)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 100_000 {
			t.Fatalf("USD balance %d: a PRICE_MOVED action sent money", got)
		}
		if q2 := e.do("GET", "/quotes/"+str(q, "id"), nil).JSON(t); q2["status"] != "PENDING" {
			t.Fatalf("quote after PRICE_MOVED: %v", q2["status"])
		}
		// The same under approval: the approval fails the action.
		expect(t, e.do("PATCH", "/config", fee(0)), http.StatusOK, "")
		expect(t, e.do("PATCH", "/agents/"+agentID+"/policy", cobj{"defaultExecutionMode": "APPROVAL_REQUIRED"}), http.StatusOK, "")
		q3 := a.must(t, http.StatusCreated, "POST", "/agents/me/quotes", chain(6_000))
		pending := a.execute(t, str(q3, "id"))
		expect(t, e.do("PATCH", "/config", fee(500)), http.StatusOK, "")
		r := e.do("POST", "/agents/"+agentID+"/actions/"+str(pending, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["status"] != "FAILED" || m["failureReason"] != "PRICE_MOVED" {
			t.Fatalf("approval after the price moved: %v", m)
		}
		// At an unchanged price it executes, and the address's account is
		// reused, not duplicated.
		expect(t, e.do("PATCH", "/config", fee(0)), http.StatusOK, "")
		expect(t, e.do("PATCH", "/agents/"+agentID+"/policy", cobj{"defaultExecutionMode": "AUTO"}), http.StatusOK, "")
		q4 := a.must(t, http.StatusCreated, "POST", "/agents/me/quotes", chain(7_000))
		if ok := a.execute(t, str(q4, "id")); ok["status"] != "APPROVED" || ok["transaction"] == nil {
			t.Fatalf("chain payment at an unchanged price: %v", ok)
		}
		if got := e.qtBalance(t, customer, "USD"); got != 93_000 {
			t.Fatalf("USD balance %d after a USD 70.00 chain payment", got)
		}
		exts := a.must(t, http.StatusOK, "GET", "/agents/me/external-accounts?accountType=SPARK_WALLET", nil)
		if exts["totalCount"] != float64(1) {
			t.Fatalf("chain address accounts: %v", exts["totalCount"])
		}
	})
}
