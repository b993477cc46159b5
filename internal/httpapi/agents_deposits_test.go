package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// R-AGENT-35: POST /agents/me/deposits and GET /agents/me/deposits/{id}
// need RECEIVE_FUNDS; the target is a Lightning invoice or a chain address
// for a BTC account of the agent's customer; the sandbox rail simulator
// pays it (the account is credited once, by an INCOMING transaction carrying
// the agent) and a target past its expiry credits nothing.
func TestAgents_Deposits_R_AGENT_35(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		move := e.acClock(t, time.Now().UTC())
		start := e.db.Now()
		customer, other := e.qtSetup(t, "USD", "BTC")
		btc, usd := e.qtAccountID(t, customer, "BTC"), e.qtAccountID(t, customer, "USD")
		agent, code := e.agCreate(t, customer, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		a := e.agInstall(t, code)

		// R-AGENT-35: a Lightning invoice for 2,500 sats.
		inv := a.must(t, http.StatusCreated, "POST", "/agents/me/deposits",
			cobj{"accountId": btc, "targetType": "LIGHTNING_INVOICE", "amount": 2500})
		b11, err := walletsig.ParseBolt11(str(inv, "lightningInvoice"))
		if err != nil || b11.Amount != "25000n" || inv["status"] != "PENDING" || str(inv, "agentId") != str(agent, "id") {
			t.Fatalf("invoice deposit %v: %+v %v", inv, b11, err)
		}
		// R-AGENT-35: a chain address.
		addr := a.must(t, http.StatusCreated, "POST", "/agents/me/deposits", cobj{"accountId": btc, "targetType": "CHAIN_ADDRESS"})
		if !strings.HasPrefix(str(addr, "address"), "tb1") || str(addr, "lightningInvoice") != "" {
			t.Fatalf("address deposit %v", addr)
		}
		if got := a.must(t, http.StatusOK, "GET", "/agents/me/deposits/"+str(inv, "id"), nil); str(got, "lightningInvoice") != str(inv, "lightningInvoice") {
			t.Fatalf("GET deposit %v", got)
		}
		// Bad input: no target type, an invoice without amount, a USD account, another customer's.
		expect(t, a.do("POST", "/agents/me/deposits", cobj{"accountId": btc}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/agents/me/deposits", cobj{"accountId": btc, "targetType": "LIGHTNING_INVOICE"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/agents/me/deposits", cobj{"accountId": usd, "targetType": "CHAIN_ADDRESS"}), http.StatusBadRequest, "INVALID_INPUT")
		e.qtAccountID(t, other, "BTC")
		expect(t, a.do("POST", "/agents/me/deposits", cobj{"accountId": e.qtAccountID(t, other, "BTC"), "targetType": "CHAIN_ADDRESS"}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")

		// The sandbox payer pays the invoice: credited once, the transaction carries the agent.
		paid := e.do("POST", "/sandbox/agents/deposits/"+str(inv, "id")+"/pay", cobj{})
		expect(t, paid, http.StatusOK, "")
		p := paid.JSON(t)
		if p["status"] != "COMPLETED" || str(p, "transactionId") == "" {
			t.Fatalf("paid deposit %v", p)
		}
		x := e.do("GET", "/transactions/"+str(p, "transactionId"), nil).JSON(t)
		if x["type"] != "INCOMING" || x["status"] != "COMPLETED" || str(x, "agentId") != str(agent, "id") {
			t.Fatalf("deposit transaction %v", x)
		}
		if got := e.qtBalance(t, customer, "BTC"); got != 2500 {
			t.Fatalf("BTC balance after the invoice: %d", got)
		}
		expect(t, e.do("POST", "/sandbox/agents/deposits/"+str(inv, "id")+"/pay", cobj{}), http.StatusConflict, "CONFLICT")
		// An address takes the amount paid, which must be given.
		expect(t, e.do("POST", "/sandbox/agents/deposits/"+str(addr, "id")+"/pay", cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/sandbox/agents/deposits/"+str(addr, "id")+"/pay", cobj{"amount": 700}), http.StatusOK, "")
		if got := e.qtBalance(t, customer, "BTC"); got != 3200 {
			t.Fatalf("BTC balance after the address: %d", got)
		}

		// Past its expiry an invoice credits nothing and reads EXPIRED.
		late := a.must(t, http.StatusCreated, "POST", "/agents/me/deposits",
			cobj{"accountId": btc, "targetType": "LIGHTNING_INVOICE", "amount": 100})
		move(start.Add(2 * time.Hour))
		expect(t, e.do("POST", "/sandbox/agents/deposits/"+str(late, "id")+"/pay", cobj{}), http.StatusConflict, "CONFLICT")
		if got := a.must(t, http.StatusOK, "GET", "/agents/me/deposits/"+str(late, "id"), nil); got["status"] != "EXPIRED" {
			t.Fatalf("late deposit %v", got)
		}
		if got := e.qtBalance(t, customer, "BTC"); got != 3200 {
			t.Fatalf("BTC balance after an expired invoice: %d", got)
		}

		// R-AGENT-35: RECEIVE_FUNDS gates both routes; another customer's agent sees 404.
		_, code2 := e.agCreate(t, other, agPolicy(5000, 20_000, 1_000_000, "CREATE_QUOTES"))
		b := e.agInstall(t, code2)
		expect(t, b.do("POST", "/agents/me/deposits", cobj{"accountId": btc, "targetType": "CHAIN_ADDRESS"}), http.StatusForbidden, "FORBIDDEN")
		expect(t, b.do("GET", "/agents/me/deposits/"+str(inv, "id"), nil), http.StatusForbidden, "FORBIDDEN")
		_, code3 := e.agCreate(t, other, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		c := e.agInstall(t, code3)
		expect(t, c.do("GET", "/agents/me/deposits/"+str(inv, "id"), nil), http.StatusNotFound, "NOT_FOUND")
	})
}
