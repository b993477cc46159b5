package httpapi

import (
	"net/http"
	"testing"
)

// agentClient is a small scripted agent: the program a customer installs.
// It holds only its bearer token, obtained by redeeming a device code with
// no platform credentials, and calls the /agents/me API with it.
type agentClient struct {
	e     *env
	token string
}

// bearer replaces the platform credentials of a request with the agent's
// token.
func bearer(token string) reqOpt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

// install redeems a device code as the agent software does and returns the
// client holding the token (R-AUTH-09: no platform credentials).
func (e *env) agInstall(t *testing.T, code string) *agentClient {
	t.Helper()
	r := e.do("POST", "/agents/device-codes/redeem", cobj{"code": code}, withCreds(""))
	expect(t, r, http.StatusOK, "")
	tok, _ := r.JSON(t)["accessToken"].(string)
	if tok == "" {
		t.Fatalf("redeem returned no token: %s", r.Body)
	}
	return &agentClient{e: e, token: tok}
}

func (a *agentClient) do(method, path string, body any) resp {
	a.e.t.Helper()
	return a.e.do(method, path, body, bearer(a.token))
}

// must sends a request and expects status, returning the JSON body.
func (a *agentClient) must(t *testing.T, status int, method, path string, body any) map[string]any {
	t.Helper()
	r := a.do(method, path, body)
	expect(t, r, status, "")
	if len(r.Body) == 0 {
		return nil
	}
	return r.JSON(t)
}

// quote asks for a quote from src to dst sending amount (smallest unit).
func (a *agentClient) quote(t *testing.T, src, dst string, amount int64) map[string]any {
	t.Helper()
	return a.must(t, http.StatusCreated, "POST", "/agents/me/quotes", qtBody(src, dst, "SENDING", amount))
}

// execute submits the quote's execution and returns the action.
func (a *agentClient) execute(t *testing.T, quoteID string) map[string]any {
	t.Helper()
	return a.must(t, http.StatusOK, "POST", "/agents/me/quotes/"+quoteID+"/execute", nil)
}

// agPolicy is a policy: AUTO, approval above threshold (USD cents), the
// given permissions, per-transaction limit perTx and daily limit daily.
func agPolicy(threshold, perTx, daily int64, perms ...string) cobj {
	return cobj{
		"permissions":          perms,
		"defaultExecutionMode": "AUTO",
		"spendingLimits":       cobj{"currency": "USD", "perTransactionLimit": perTx, "dailyLimit": daily, "monthlyLimit": nil},
		"approvalThresholds":   cobj{"currency": "USD", "amount": threshold},
	}
}

var agAllPerms = []string{"CREATE_QUOTES", "EXECUTE_QUOTES", "MANAGE_EXTERNAL_ACCOUNTS", "RECEIVE_FUNDS"}

// agCreate creates an agent and returns the response (agent, deviceCode).
func (e *env) agCreate(t *testing.T, customerID string, policy cobj) (agent map[string]any, code string) {
	t.Helper()
	r := e.do("POST", "/agents", cobj{"name": "Bookkeeper", "customerId": customerID, "policy": policy})
	expect(t, r, http.StatusCreated, "")
	m := r.JSON(t)
	return m["agent"].(map[string]any), m["deviceCode"].(map[string]any)["code"].(string)
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}
