package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// agFixture makes a customer with USD and EUR accounts (USD funded), an
// agent for it with every quote permission, installed.
func agFixture(t *testing.T, e *env, policy cobj) (customer, other, usd, eur, agentID string, a *agentClient) {
	t.Helper()
	customer, other = e.qtSetup(t, "USD", "EUR")
	usd, eur = e.qtAccountID(t, customer, "USD"), e.qtAccountID(t, customer, "EUR")
	e.acFund(t, usd, 100_000)
	agent, code := e.agCreate(t, customer, policy)
	return customer, other, usd, eur, str(agent, "id"), e.agInstall(t, code)
}

// rawBearer sends a request with only the given Authorization header.
func (e *env) rawAuth(method, path, authorization string) (int, string) {
	req := httptest.NewRequest(method, "/"+Version+path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	code := ""
	if m := (resp{Body: rec.Body.Bytes()}); len(m.Body) > 0 && m.Body[0] == '{' {
		code, _ = m.JSON(e.t)["code"].(string)
	}
	return rec.Code, code
}

// R-AUTH-07, R-AUTH-08: an agent token never reaches a platform-credential
// route (every one in the server's table answers 401), and platform
// credentials never reach an agent route (401), nor does no credential.
func TestAgents_TokenNeverReachesPlatformRoutes_R_AUTH_07_R_AUTH_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, _, _, _, _, a := agFixture(t, e, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		agentRoutes := 0
		for _, rt := range e.srv.table {
			if rt.public || rt.open {
				continue
			}
			method, pattern, _ := strings.Cut(rt.pattern, " ")
			path := pathParam.ReplaceAllString(pattern, "Unknown:agents-test")
			if rt.agent {
				agentRoutes++
				for _, creds := range []string{"", "Basic " + basic(e.sandbox), "Bearer agt_" + strings.Repeat("0", 64), "Bearer " + a.token + "x"} {
					if st, code := e.rawAuth(method, path, creds); st != http.StatusUnauthorized || code != "UNAUTHORIZED" {
						t.Errorf("%s with %.12q: %d %s", rt.pattern, creds, st, code)
					}
				}
				continue
			}
			if st, code := e.rawAuth(method, path, "Bearer "+a.token); st != http.StatusUnauthorized || code != "UNAUTHORIZED" {
				t.Errorf("agent token on platform route %s: %d %s", rt.pattern, st, code)
			}
		}
		if agentRoutes < 10 {
			t.Fatalf("only %d agent routes", agentRoutes)
		}
		// R-AUTH-07: the token itself works.
		a.must(t, http.StatusOK, "GET", "/agents/me", nil)
	})
}

// R-AUTH-08, R-AGENT-28: another customer's quote, account, external
// account and transaction are 404 to the agent, and its quotes may only
// use its customer's accounts.
func TestAgents_ScopedToTheCustomer_R_AUTH_08_R_AGENT_28(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, other, usd, eur, _, a := agFixture(t, e, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		otherUSD, otherEUR := e.qtAccountID(t, other, "USD"), e.qtAccountID(t, other, "EUR")
		e.acFund(t, otherUSD, 10_000)
		// A quote of another customer: 404 to read and to execute.
		q := e.qtQuote(t, qtBody(otherUSD, otherEUR, "SENDING", 1_000))
		expect(t, a.do("GET", "/agents/me/quotes/"+str(q, "id"), nil), http.StatusNotFound, "QUOTE_NOT_FOUND")
		before := e.qtCounts(t)
		expect(t, a.do("POST", "/agents/me/quotes/"+str(q, "id")+"/execute", nil), http.StatusNotFound, "QUOTE_NOT_FOUND")
		// Quotes from or to another customer's accounts.
		expect(t, a.do("POST", "/agents/me/quotes", qtBody(otherUSD, eur, "SENDING", 100)), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, a.do("POST", "/agents/me/quotes", qtBody(usd, otherEUR, "SENDING", 100)), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if after := e.qtCounts(t); after != before {
			t.Fatalf("refused agent requests changed state: %s → %s", before, after)
		}
		// Another customer's external account, and its creation for them.
		ext := e.eaCreate(t, "/customers/external-accounts", eaUSD(other, "000555666777"))
		expect(t, a.do("GET", "/agents/me/external-accounts/"+str(ext, "id"), nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, a.do("DELETE", "/agents/me/external-accounts/"+str(ext, "id"), nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, a.do("POST", "/agents/me/external-accounts", eaUSD(other, "000555666778")), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		list := a.must(t, http.StatusOK, "GET", "/agents/me/external-accounts", nil)
		if list["totalCount"] != float64(0) {
			t.Fatalf("agent sees external accounts %v", list)
		}
		// Another customer's transaction (R-AGENT-28).
		for _, x := range e.acTransactions(t, "customerId="+other) {
			expect(t, a.do("GET", "/agents/me/transactions/"+str(x, "id"), nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		}
		for _, x := range a.must(t, http.StatusOK, "GET", "/agents/me/transactions", nil)["data"].([]any) {
			if c := str(x.(map[string]any), "customerId"); c != "" && c == other {
				t.Fatalf("agent lists the other customer's transaction %v", x)
			}
		}
	})
}

// Another environment of the platform (another tenant) sees nothing of the
// agent, and cannot decide its actions.
func TestAgents_OtherTenantSeesNothing_R_AUTH_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, _, usd, eur, agentID, a := agFixture(t, e, agPolicy(100, 20_000, 1_000_000, agAllPerms...))
		act := a.execute(t, str(a.quote(t, usd, eur, 1_000), "id"))
		prod := withCreds(e.production)
		expect(t, e.do("GET", "/agents/"+agentID, nil, prod), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(act, "id")+"/approve", nil, prod), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(act, "id")+"/reject", nil, prod), http.StatusNotFound, "NOT_FOUND")
		if l := e.do("GET", "/agents/approvals", nil, prod).JSON(t); l["totalCount"] != float64(0) {
			t.Fatalf("production sees sandbox approvals: %v", l)
		}
		if got := a.must(t, http.StatusOK, "GET", "/agents/me/actions/"+str(act, "id"), nil); got["status"] != "PENDING_APPROVAL" {
			t.Fatalf("action after the other tenant's attempts: %v", got["status"])
		}
	})
}

// R-AGENT-24, R-AGENT-05, R-AGENT-29, R-AGENT-33, R-AGENT-34: a permission
// revoked by a policy PATCH refuses its endpoint on the agent's next
// request; the others still work.
func TestAgents_PermissionsGateEndpoints_R_AGENT_24(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, _, usd, eur, agentID, a := agFixture(t, e, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		q := a.quote(t, usd, eur, 1_000)
		set := func(perms ...string) {
			t.Helper()
			expect(t, e.do("PATCH", "/agents/"+agentID+"/policy", cobj{"permissions": perms}), http.StatusOK, "")
		}
		// R-AGENT-29: without CREATE_QUOTES the quote is refused.
		set("EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS")
		expect(t, a.do("POST", "/agents/me/quotes", qtBody(usd, eur, "SENDING", 100)), http.StatusForbidden, "FORBIDDEN")
		// R-AGENT-34: without MANAGE_EXTERNAL_ACCOUNTS.
		set("CREATE_QUOTES", "EXECUTE_QUOTES")
		expect(t, a.do("GET", "/agents/me/external-accounts", nil), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("POST", "/agents/me/external-accounts", eaUSD("", "000999888777")), http.StatusForbidden, "FORBIDDEN")
		// R-AGENT-33: without EXECUTE_QUOTES nothing executes.
		set("CREATE_QUOTES")
		before := e.qtCounts(t)
		expect(t, a.do("POST", "/agents/me/quotes/"+str(q, "id")+"/execute", nil), http.StatusForbidden, "FORBIDDEN")
		if after := e.qtCounts(t); after != before {
			t.Fatalf("refused execution changed state: %s → %s", before, after)
		}
		// Given back, it works at once (R-AGENT-05).
		set("CREATE_QUOTES", "EXECUTE_QUOTES")
		if act := a.execute(t, str(q, "id")); act["status"] != "APPROVED" {
			t.Fatalf("action %v", act)
		}
	})
}

func basic(creds string) string {
	r := httptest.NewRequest("GET", "/", nil)
	withCreds(creds)(r)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}
