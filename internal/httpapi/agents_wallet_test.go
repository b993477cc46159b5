package httpapi

import (
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// R-AGENT-33, R-EWA-22, R-EWA-31: an agent executes from its customer's
// embedded wallet only with an ACTIVE delegated key of its own on that
// wallet, which the service uses to sign the quote's payloadToSign; the key
// must be for a wallet of the agent's customer; once revoked, the agent's
// executions from the wallet are refused and move nothing.
func TestAgents_EmbeddedWalletSignedWithDelegatedKey_R_AGENT_33(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.qtWebhook(t)
		c := e.wlSetup(t)
		owner := e.wlOwner(t, c)
		_, key := c.login(c.createOTP("EMAIL_OTP"), wallets.SandboxCode(6))
		e.acFund(t, c.accountID, 3_000_000)
		usd := e.acAccount(t, owner, "USD")["id"].(string)
		agent, code := e.agCreate(t, owner, agPolicy(1_000_000, 100_000, 10_000_000, agAllPerms...))
		agentID := str(agent, "id")
		a := e.agInstall(t, code)
		balance := func() int64 { return acAmount(t, e.wlWallet(t, owner), "balance") }

		// Without a delegated key the agent cannot sign: refused, nothing moves.
		q := a.quote(t, c.accountID, usd, 1_000_000)
		expect(t, a.do("POST", "/agents/me/quotes/"+str(q, "id")+"/execute", nil), http.StatusForbidden, "FORBIDDEN")
		if balance() != 3_000_000 {
			t.Fatal("an unsigned agent execution moved money")
		}

		// R-EWA-22: an agent key only for a wallet of the agent's customer.
		other := e.qtCustomer(t)
		otherAgent, _ := e.agCreate(t, other, agPolicy(1_000_000, 100_000, 10_000_000, agAllPerms...))
		r := c.do("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "not theirs",
			"agentId": str(otherAgent, "id")})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		r = c.do("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "nobody",
			"agentId": "Agent:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c"})
		expect(t, r, http.StatusNotFound, "NOT_FOUND")

		// The customer delegates a key to the agent (signed by its session).
		r = c.signed("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "bookkeeper",
			"agentId": agentID}, key)
		expect(t, r, http.StatusCreated, "")
		keyID := str(r.JSON(t), "id")

		// R-AGENT-33: now the execution is signed with it and runs.
		act := a.execute(t, str(q, "id"))
		if act["status"] != "APPROVED" || act["transaction"] == nil {
			t.Fatalf("action %v", act)
		}
		if got := balance(); got != 2_000_000 {
			t.Fatalf("wallet balance %d", got)
		}

		// R-EWA-31: a revoked key signs no more.
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+keyID, nil), http.StatusNoContent, "")
		q2 := a.quote(t, c.accountID, usd, 1_000_000)
		expect(t, a.do("POST", "/agents/me/quotes/"+str(q2, "id")+"/execute", nil), http.StatusForbidden, "FORBIDDEN")
		if got := balance(); got != 2_000_000 {
			t.Fatalf("wallet balance %d after a refused execution", got)
		}
	})
}
