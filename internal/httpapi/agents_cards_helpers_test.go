package httpapi

import (
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// agCardPerms are the permissions of a card-issuing agent.
var agCardPerms = []string{"CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_CARDS"}

// agDelegate has the customer delegate a key of its embedded wallet to the
// agent, as a customer does: an EMAIL_OTP login, then the signed POST
// /auth/delegated-keys naming the agent. It returns the key's id.
func (e *env) agDelegate(t *testing.T, customerID, agentID string) string {
	t.Helper()
	e.wlEnable(t)
	c := e.wlClient(t, customerID)
	_, key := c.login(c.createOTP("EMAIL_OTP"), wallets.SandboxCode(6))
	r := c.signed("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "purchases",
		"agentId": agentID}, key)
	expect(t, r, http.StatusCreated, "")
	return str(r.JSON(t), "id")
}

// agCardFixture sets up an APPROVED customer whose USD account holds funds,
// an installed agent with policy, and (withKey) the agent's ACTIVE
// delegated key on the customer's wallet.
func (e *env) agCardFixture(t *testing.T, funds int64, policy cobj, withKey bool) (a *agentClient, agentID, cust, usd string) {
	t.Helper()
	e.cdFast()
	e.acSupport(t, "USD", "EUR")
	e.custSkipPaperwork(t, true)
	cust, usd = e.agCardCustomer(t, "Test User")
	if funds > 0 {
		e.acFund(t, usd, funds)
	}
	agent, code := e.agCreate(t, cust, policy)
	agentID = str(agent, "id")
	a = e.agInstall(t, code)
	if withKey {
		e.agDelegate(t, cust, agentID)
	}
	return a, agentID, cust, usd
}

// agCardCustomer makes a customer named name (sandbox KYC by its suffix)
// with an email of its own (a wallet's EMAIL_OTP is unique) and returns it
// with its USD account.
func (e *env) agCardCustomer(t *testing.T, name string) (string, string) {
	t.Helper()
	body := custIndividual(name)
	body["email"] = "buyer-" + strings.ToLower(rand.Text()[:10]) + "@example.com"
	id := e.custCreate(t, body)["id"].(string)
	return id, e.acAccount(t, id, "USD")["id"].(string)
}

// agCardBody is a purchase card request.
func agCardBody(kind string, amount int64, source string) cobj {
	return cobj{"kind": kind, "currency": "USD", "amount": amount, "sourceAccountId": source, "memo": "office supplies"}
}

// agIssue issues a card that the policy lets through at once (201) and
// returns the agent card wrapper.
func (a *agentClient) agIssue(t *testing.T, kind string, amount int64, source string) map[string]any {
	t.Helper()
	return a.must(t, http.StatusCreated, "POST", "/agents/me/cards", agCardBody(kind, amount, source))
}

// agCardActive issues a card and waits until the issuer made it ACTIVE.
func (a *agentClient) agCardActive(t *testing.T, kind string, amount int64, source string) string {
	t.Helper()
	w := a.agIssue(t, kind, amount, source)
	id := str(w["card"].(map[string]any), "id")
	a.e.cdWait(t, id, "ACTIVE")
	return id
}

// agCardGet reads one of the agent's cards.
func (a *agentClient) agCardGet(t *testing.T, cardID string) map[string]any {
	t.Helper()
	return a.must(t, http.StatusOK, "GET", "/agents/me/cards/"+cardID, nil)
}

// agDeclined authorizes at merchant and expects a decline for reason.
func (e *env) agDeclined(t *testing.T, cardID string, amount int64, merchant cobj, reason string) {
	t.Helper()
	tx := e.cdAuth(t, cardID, amount, merchant)
	if tx["status"] != "DECLINED" || tx["cardDeclinedReason"] != reason {
		t.Fatalf("authorization of %d at %v: %v %v, want DECLINED %s", amount, merchant["descriptor"], tx["status"],
			tx["cardDeclinedReason"], reason)
	}
}
