package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// R-AGENT-16, R-AGENT-21: a waiting quote action expires with its quote as
// durable background work: the sweep (any node, after a restart too: it
// reads only the stored actions) fails it with QUOTE_EXPIRED and emits
// AGENT_ACTION.FAILED; it can then no longer be decided (R-AGENT-20).
func TestAgents_WaitingActionsExpireWithTheirQuote_R_AGENT_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		move := e.acClock(t, time.Now().UTC())
		start := e.db.Now()
		_, _, usd, eur, agentID, a := agFixture(t, e, agPolicy(100, 20_000, 1_000_000, agAllPerms...))
		q := a.quote(t, usd, eur, 1_000)
		act := a.execute(t, str(q, "id"))
		exp, err := time.Parse(time.RFC3339Nano, str(act, "expiresAt"))
		if err != nil || str(act, "expiresAt") != str(q, "expiresAt") {
			t.Fatalf("action expiresAt %v, quote %v (%v)", act["expiresAt"], q["expiresAt"], err)
		}
		svc := e.srv.AgentService()
		// Before its time nothing expires.
		move(exp.Add(-time.Second))
		if n, err := svc.ExpireDue(context.Background(), 100); err != nil || n != 0 {
			t.Fatalf("expired %d before its time (%v)", n, err)
		}
		move(start.Add(10 * time.Minute))
		if n, err := svc.ExpireDue(context.Background(), 100); err != nil || n != 1 {
			t.Fatalf("expired %d (%v)", n, err)
		}
		got := a.must(t, http.StatusOK, "GET", "/agents/me/actions/"+str(act, "id"), nil)
		if got["status"] != "FAILED" || got["failureReason"] != "QUOTE_EXPIRED" {
			t.Fatalf("expired action %v", got)
		}
		agEventTypes(t, e, str(act, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.FAILED")
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(act, "id")+"/approve", nil), http.StatusConflict, "CONFLICT")
		if n, _ := svc.ExpireDue(context.Background(), 100); n != 0 {
			t.Fatalf("expired again: %d", n)
		}
	})
}
