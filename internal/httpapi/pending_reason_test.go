package httpapi

import (
	"net/http"
	"testing"
)

// TestPendingReason_R_TXN_30: an incoming payment held for the platform's
// review is PENDING with pendingReason COMPLIANCE_REVIEW (on GET, in the
// list and in its INCOMING_PAYMENT.PENDING event); approval or rejection
// ends the hold and the reason is gone; a payment that is not held has none.
func TestPendingReason_R_TXN_30(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		c := e.acCustomer(t)
		acct := e.acAccount(t, c, "USD")["id"].(string)
		held := func() string {
			r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 4_907})
			expect(t, r, http.StatusOK, "")
			x := r.JSON(t)
			if x["status"] != "PENDING" || x["pendingReason"] != "COMPLIANCE_REVIEW" {
				t.Fatalf("held payment %v", x)
			}
			return x["id"].(string)
		}
		a := held()
		if x := e.do("GET", "/transactions/"+a, nil).JSON(t); x["pendingReason"] != "COMPLIANCE_REVIEW" {
			t.Fatalf("GET %v", x)
		}
		listed := false
		for _, x := range e.acTransactions(t, "status=PENDING") {
			if x["id"] == a {
				listed = true
				if x["pendingReason"] != "COMPLIANCE_REVIEW" {
					t.Fatalf("listed %v", x)
				}
			}
		}
		if !listed {
			t.Fatal("the held payment is not listed")
		}
		evs := e.acEvents(t, a)
		if len(evs) != 1 || evs[0]["type"] != "INCOMING_PAYMENT.PENDING" ||
			evs[0]["data"].(map[string]any)["pendingReason"] != "COMPLIANCE_REVIEW" {
			t.Fatalf("events %v", evs)
		}
		for _, end := range []string{"approve", "reject"} {
			id := a
			if end == "reject" {
				id = held()
			}
			r := e.do("POST", "/transactions/"+id+"/"+end, nil)
			expect(t, r, http.StatusOK, "")
			if x := r.JSON(t); x["status"] == "PENDING" || x["pendingReason"] != nil {
				t.Fatalf("%s kept the hold: %v", end, x)
			}
			if x := e.do("GET", "/transactions/"+id, nil).JSON(t); x["pendingReason"] != nil {
				t.Fatalf("%s: GET %v", end, x)
			}
		}
		r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 4_000})
		if x := r.JSON(t); x["status"] != "COMPLETED" || x["pendingReason"] != nil {
			t.Fatalf("not held %v", x)
		}
	})
}
