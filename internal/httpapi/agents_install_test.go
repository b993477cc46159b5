package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ratelimit"
)

// R-AGENT-07, R-AGENT-08, R-AGENT-09, R-AUTH-09: device codes regenerate,
// poll, and redeem once, without platform credentials; a new installation
// replaces the old token.
func TestAgents_DeviceCodes_R_AGENT_07_R_AGENT_08_R_AGENT_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer := e.qtCustomer(t)
		agent, first := e.agCreate(t, customer, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		agentID := str(agent, "id")
		if len(strings.ReplaceAll(first, "-", "")) != 8 {
			t.Fatalf("device code %q is not 8 letters", first)
		}
		// R-AGENT-08: 2xx before redemption.
		st := e.do("POST", "/agents/device-codes/status", cobj{"code": first})
		expect(t, st, http.StatusOK, "")
		if m := st.JSON(t); m["redeemed"] != false || m["agentId"] != agentID {
			t.Fatalf("status before redemption: %v", m)
		}
		// R-AGENT-07: regenerating invalidates the unredeemed code.
		r := e.do("POST", "/agents/"+agentID+"/device-codes", nil)
		expect(t, r, http.StatusCreated, "")
		second := str(r.JSON(t), "code")
		expect(t, e.do("POST", "/agents/device-codes/redeem", cobj{"code": first}, withCreds("")), http.StatusNotFound, "NOT_FOUND")
		// R-AUTH-09: typed in lower case with spaces, without credentials.
		typed := strings.ToLower(strings.ReplaceAll(second, "-", " "))
		r = e.do("POST", "/agents/device-codes/redeem", cobj{"code": typed}, withCreds(""))
		expect(t, r, http.StatusOK, "")
		red := r.JSON(t)
		tok := str(red, "accessToken")
		if tok == "" || red["agentId"] != agentID || red["agentName"] != "Bookkeeper" {
			t.Fatalf("redeemed: %v", red)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("the token's answer may be cached: %q", r.Header.Get("Cache-Control"))
		}
		// R-AGENT-09: a second redeem returns no token.
		r = e.do("POST", "/agents/device-codes/redeem", cobj{"code": second}, withCreds(""))
		expect(t, r, http.StatusNotFound, "NOT_FOUND")
		if strings.Contains(string(r.Body), "accessToken") {
			t.Fatalf("second redeem: %s", r.Body)
		}
		// R-AGENT-08: 2xx after redemption too.
		if m := e.do("POST", "/agents/device-codes/status", cobj{"code": second}).JSON(t); m["redeemed"] != true {
			t.Fatalf("status after redemption: %v", m)
		}
		a := &agentClient{e: e, token: tok}
		a.must(t, http.StatusOK, "GET", "/agents/me", nil)
		// A new installation replaces (revokes) the old token.
		r = e.do("POST", "/agents/"+agentID+"/device-codes", nil)
		b := e.agInstall(t, str(r.JSON(t), "code"))
		expect(t, a.do("GET", "/agents/me", nil), http.StatusUnauthorized, "UNAUTHORIZED")
		b.must(t, http.StatusOK, "GET", "/agents/me", nil)
		// The stored forms are hashes: neither code nor token in clear.
		row, err := e.db.Read().GetAgent(context.Background(), e.acTenant(), agentID, false)
		if err != nil || len(row.TokenHash) != 64 || strings.Contains(b.token, row.TokenHash) || strings.Contains(row.TokenHash, strings.TrimPrefix(b.token, "agt_")) {
			t.Fatalf("stored token form %q (%v)", row.TokenHash, err)
		}
		for _, c := range []string{second, strings.ReplaceAll(second, "-", "")} {
			if _, err := e.db.Read().AgentDeviceCodeByHash(context.Background(), c, false); err == nil {
				t.Fatalf("device code %q stored in clear", c)
			}
		}
		// Deleting the agent revokes its token (R-AGENT-02).
		expect(t, e.do("DELETE", "/agents/"+agentID, nil), http.StatusNoContent, "")
		expect(t, b.do("GET", "/agents/me", nil), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, e.do("GET", "/agents/"+agentID, nil), http.StatusNotFound, "NOT_FOUND")
	})
}

// Malformed codes are 400 and change nothing; a code of another tenant is
// not found by its status poll.
func TestAgents_DeviceCodes_Malformed(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		customer := e.qtCustomer(t)
		_, code := e.agCreate(t, customer, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		for _, bad := range []any{"", "ABCD-EFGH", "BCDF-GHJ", "BCDF-GHJKL", strings.Repeat("B", 40), "BCDF-GHJ1", 12345678} {
			r := e.do("POST", "/agents/device-codes/redeem", cobj{"code": bad}, withCreds(""))
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		}
		expect(t, e.do("POST", "/agents/device-codes/redeem", cobj{}, withCreds("")), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/agents/device-codes/redeem", cobj{"code": code, "extra": 1}, withCreds("")), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/agents/device-codes/status", cobj{"code": code}, withCreds(e.production)), http.StatusNotFound, "NOT_FOUND")
		// Nothing was redeemed by the malformed attempts.
		if m := e.do("POST", "/agents/device-codes/status", cobj{"code": code}).JSON(t); m["redeemed"] != false {
			t.Fatalf("status %v", m)
		}
		e.agInstall(t, code)
	})
}

// Guessing device codes is rate-limited per caller: 429 RATE_LIMITED with
// Retry-After once the burst is spent, even for well-formed codes.
func TestAgents_DeviceCodes_GuessingIsRateLimited(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.srv.agentService().Guesses = ratelimit.New(0.01, 5)
		limited := 0
		for range 8 {
			r := e.do("POST", "/agents/device-codes/redeem", cobj{"code": "BCDF-GHJK"}, withCreds(""))
			switch r.Status {
			case http.StatusNotFound:
			case http.StatusTooManyRequests:
				expect(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
				if r.Header.Get("Retry-After") == "" {
					t.Fatal("429 without Retry-After")
				}
				limited++
			default:
				t.Fatalf("guess: %d %s", r.Status, r.Body)
			}
		}
		if limited != 3 {
			t.Fatalf("%d of 8 guesses limited with a burst of 5", limited)
		}
	})
}
