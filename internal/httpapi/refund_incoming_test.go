package httpapi

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/internal/platforms"
)

// refundOf reads a transaction's refund object.
func refundOf(t *testing.T, x map[string]any) map[string]any {
	t.Helper()
	r, ok := x["refund"].(map[string]any)
	if !ok {
		t.Fatalf("no refund object: %v", x)
	}
	return r
}

func (e *env) eventTypes(t *testing.T, resourceID string) []string {
	t.Helper()
	var types []string
	for _, ev := range e.acEvents(t, resourceID) {
		types = append(types, ev["type"].(string))
	}
	return types
}

// TestRefundIncoming_R_TXN_46: a completed incoming payment is sent back to
// its sender: INCOMING_PAYMENT.REFUND_PENDING at once with the amount held,
// then REFUND_COMPLETED with settledAt when the rail delivers it (the money
// leaves through the ledger); the rail's failure path (amount ending 901)
// gives REFUND_FAILED and the money back, after which a new refund may be
// made. A second refund, a refund of a payment whose money was used, of a
// pending or outgoing payment, or of another platform's payment is refused
// and changes nothing.
func TestRefundIncoming_R_TXN_46(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.driveByHand() // the test runs the rail steps
		railsFactorZero(t)
		a, b := e.qtSetup(t, "USD")
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		deposit := func(amount int64) string {
			r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": amount, "paymentRail": "RTP"})
			expect(t, r, http.StatusOK, "")
			return r.JSON(t)["id"].(string)
		}
		balance := func() (avail, total int64) {
			acct := e.acAccount(t, a, "USD")
			return qtAmount(t, acct, "balance"), qtAmount(t, acct, "totalBalance")
		}
		ok := deposit(12_500)
		r := e.do("POST", "/sandbox/transactions/"+ok+"/refund", cobj{"reason": "TRANSACTION_FAILED"},
			withHeader("Idempotency-Key", "refund-ok"))
		expect(t, r, http.StatusOK, "")
		x := r.JSON(t)
		if rf := refundOf(t, x); x["status"] != "COMPLETED" || rf["status"] != "PENDING" ||
			rf["reason"] != "TRANSACTION_FAILED" || rf["initiatedAt"] == nil || rf["settledAt"] != nil || rf["reference"] == "" {
			t.Fatalf("refund requested %v", x)
		}
		if av, tot := balance(); av != 0 || tot != 12_500 {
			t.Fatalf("held: available %d total %d", av, tot)
		}
		// The same key replays the answer; without it a second refund is
		// refused (the whole payment is refunded once).
		again := e.do("POST", "/sandbox/transactions/"+ok+"/refund", cobj{"reason": "TRANSACTION_FAILED"},
			withHeader("Idempotency-Key", "refund-ok"))
		expect(t, again, http.StatusOK, "")
		if refundOf(t, again.JSON(t))["initiatedAt"] != refundOf(t, x)["initiatedAt"] {
			t.Fatalf("replay differs: %s", again.Body)
		}
		expect(t, e.do("POST", "/sandbox/transactions/"+ok+"/refund", nil), http.StatusConflict, "CONFLICT")

		e.railsDrain(t)
		x = e.do("GET", "/transactions/"+ok, nil).JSON(t)
		if rf := refundOf(t, x); x["status"] != "COMPLETED" || rf["status"] != "COMPLETED" || rf["settledAt"] == nil {
			t.Fatalf("refund settled %v", x)
		}
		if av, tot := balance(); av != 0 || tot != 0 {
			t.Fatalf("after refund: available %d total %d", av, tot)
		}
		want := []string{"INCOMING_PAYMENT.COMPLETED", "INCOMING_PAYMENT.REFUND_PENDING", "INCOMING_PAYMENT.REFUND_COMPLETED"}
		if got := e.eventTypes(t, ok); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		expect(t, e.do("POST", "/sandbox/transactions/"+ok+"/refund", nil), http.StatusConflict, "CONFLICT")

		// The rail's failure path: the hold is voided, the money stays.
		fail := deposit(3_901)
		r = e.do("POST", "/sandbox/transactions/"+fail+"/refund", nil)
		expect(t, r, http.StatusOK, "")
		if rf := refundOf(t, r.JSON(t)); rf["reason"] != "USER_CANCELLATION" || rf["status"] != "PENDING" {
			t.Fatalf("default reason %v", rf)
		}
		e.railsDrain(t)
		x = e.do("GET", "/transactions/"+fail, nil).JSON(t)
		if rf := refundOf(t, x); rf["status"] != "FAILED" || rf["settledAt"] != nil || x["status"] != "COMPLETED" {
			t.Fatalf("failed refund %v", x)
		}
		if av, tot := balance(); av != 3_901 || tot != 3_901 {
			t.Fatalf("after failed refund: available %d total %d", av, tot)
		}
		want = []string{"INCOMING_PAYMENT.COMPLETED", "INCOMING_PAYMENT.REFUND_PENDING", "INCOMING_PAYMENT.REFUND_FAILED"}
		if got := e.eventTypes(t, fail); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		r = e.do("POST", "/sandbox/transactions/"+fail+"/refund", nil)
		expect(t, r, http.StatusOK, "")
		if refundOf(t, r.JSON(t))["status"] != "PENDING" {
			t.Fatalf("retry %s", r.Body)
		}
		e.railsDrain(t)

		// An ACH deposit being refunded cannot also be returned by its bank:
		// the money is on its way back already.
		ach := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": 1_000}).JSON(t)["id"].(string)
		expect(t, e.do("POST", "/sandbox/transactions/"+ach+"/refund", nil), http.StatusOK, "")
		expect(t, e.do("POST", "/sandbox/transactions/"+ach+"/return", nil), http.StatusConflict, "CONFLICT")
		e.railsDrain(t)

		// Insufficient balance: the payment was already spent.
		spent := deposit(5_000)
		e.qtQuote(t, qtBody(src, dst, "SENDING", 4_000, "immediatelyExecute", true))
		before := e.acCounts(t)
		expect(t, e.do("POST", "/sandbox/transactions/"+spent+"/refund", nil), http.StatusBadRequest, "INSUFFICIENT_FUNDS")
		if e.acCounts(t) != before || e.do("GET", "/transactions/"+spent, nil).JSON(t)["refund"] != nil {
			t.Fatal("refused refund changed something")
		}

		// Refusals that change nothing.
		pending := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": 2_907}).JSON(t)["id"].(string)
		expect(t, e.do("POST", "/sandbox/transactions/"+pending+"/refund", nil), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", "/sandbox/transactions/"+spent+"/refund", cobj{"reason": "MANUAL_REFUND"}),
			http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/sandbox/transactions/"+spent+"/refund", cobj{"amount": 100}),
			http.StatusBadRequest, "INVALID_INPUT") // no partial refunds: the refund object has no amount
		out := e.qtQuote(t, qtBody(src, dst, "SENDING", 100, "immediatelyExecute", true))["transactionId"].(string)
		expect(t, e.do("POST", "/sandbox/transactions/"+out+"/refund", nil), http.StatusConflict, "CONFLICT")
		unknown := "Transaction:00000000-0000-7000-8000-000000000000"
		expect(t, e.do("POST", "/sandbox/transactions/"+unknown+"/refund", nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		// Tenancy: another platform's payment does not exist for this one.
		other, err := platforms.Create(context.Background(), e.db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("POST", "/sandbox/transactions/"+fail+"/refund", nil, withCreds(other.SandboxToken)), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		expect(t, e.do("POST", "/sandbox/transactions/"+fail+"/refund", nil, withCreds(e.production)), http.StatusForbidden, "")
		e.acAudit(t)
	})
}
