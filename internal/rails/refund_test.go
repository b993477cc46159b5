package rails

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/transactions"
)

// TestRefundMoves walks every row of the incoming refund's table and the
// moves it leaves out (R-TXN-46: each status is reported by its event).
func TestRefundMoves(t *testing.T) {
	for _, m := range RefundMoves {
		if !RefundAllowed(m.From, m.To) {
			t.Errorf("%q → %q listed but refused", m.From, m.To)
		}
	}
	statuses := []string{"", transactions.RefundPending, transactions.RefundCompleted, transactions.RefundFailed}
	n := 0
	for _, from := range statuses {
		for _, to := range statuses {
			if RefundAllowed(from, to) {
				n++
			}
		}
	}
	if n != len(RefundMoves) {
		t.Fatalf("%d moves allowed, table has %d", n, len(RefundMoves))
	}
	for _, m := range []RefundMove{{transactions.RefundCompleted, transactions.RefundPending},
		{"", transactions.RefundCompleted}, {transactions.RefundPending, transactions.RefundPending}} {
		if RefundAllowed(m.From, m.To) {
			t.Errorf("%q → %q allowed: a completed refund is final, and a refund starts PENDING", m.From, m.To)
		}
	}
}

// refundFails follows the sandbox's magic amounts and refuses production.
func TestRefundFails(t *testing.T) {
	for amount, want := range map[int64]bool{12_500: false, 3_901: true, 3_905: true, 3_906: false, 3_907: false} {
		st := JobState{Amount: amount}
		st.Payout.Tenant.Env = "sandbox"
		if got := refundFails(st); got != want {
			t.Errorf("sandbox %d: fails %v, want %v", amount, got, want)
		}
		st.Payout.Tenant.Env = "production"
		if !refundFails(st) {
			t.Errorf("production %d: a refund without a rail partner must fail", amount)
		}
	}
}
