package transactions

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// TestTransitionTable_PartA walks every row of Part A "Quote and outgoing
// transaction" as the transaction lives it (R-QUOTE-23..33, R-TXN-33..36).
func TestTransitionTable_PartA(t *testing.T) {
	rows := []struct {
		name     string
		typ      string
		from, to string
	}{
		// (none) → PENDING / PROCESSING / PENDING_AUTHORIZATION are creations
		// (Record), not moves; execute and immediatelyExecute then move:
		{"execute", TypeOutgoing, StatusPending, StatusProcessing},
		{"execute under SCA", TypeOutgoing, StatusPending, StatusPendingAuthorization},
		{"SCA authorized: payout proceeds", TypeOutgoing, StatusPendingAuthorization, StatusProcessing},
		{"SCA authorized: realtime funding waits for funds", TypeOutgoing, StatusPendingAuthorization, StatusPending},
		{"SCA never completed (SCA_NOT_COMPLETED)", TypeOutgoing, StatusPendingAuthorization, StatusFailed},
		{"SCA quote expires", TypeOutgoing, StatusPendingAuthorization, StatusExpired},
		{"expiresAt passes", TypeOutgoing, StatusPending, StatusExpired},
		{"deposit to payment instructions", TypeOutgoing, StatusPending, StatusProcessing},
		{"rail completes", TypeOutgoing, StatusProcessing, StatusCompleted},
		{"failure", TypeOutgoing, StatusProcessing, StatusFailed},
		{"ACH payout returned (R-TXN-33)", TypeOutgoing, StatusCompleted, StatusFailed},
		{"incoming ACH returned (R-TXN-34)", TypeIncoming, StatusCompleted, StatusFailed},
		{"incoming return dishonored (R-TXN-35)", TypeIncoming, StatusFailed, StatusCompleted},
	}
	for _, r := range rows {
		if !Allowed(r.typ, r.from, r.to) {
			t.Errorf("%s: %s %s → %s refused", r.name, r.typ, r.from, r.to)
		}
	}
	// Only EXPIRED is terminal (R-TXN-36): nothing leaves it; COMPLETED and
	// FAILED still move.
	for _, to := range Statuses {
		if Allowed(TypeOutgoing, StatusExpired, to) {
			t.Errorf("EXPIRED → %s allowed; EXPIRED is terminal", to)
		}
	}
	refused := []Move{{StatusCompleted, StatusProcessing}, {StatusProcessing, StatusPending}, {StatusProcessing, StatusExpired},
		{StatusCompleted, StatusExpired}, {StatusFailed, StatusProcessing}}
	for _, m := range refused {
		if Allowed(TypeOutgoing, m.From, m.To) {
			t.Errorf("%s → %s allowed", m.From, m.To)
		}
	}
	if Allowed(TypeCard, StatusPending, StatusCompleted) {
		t.Error("card transactions have their own table")
	}
	// Every row of the table is reachable from PENDING (no dead rows).
	reach := map[string]bool{StatusPending: true}
	for changed := true; changed; {
		changed = false
		for _, m := range OutgoingMoves {
			if reach[m.From] && !reach[m.To] {
				reach[m.To], changed = true, true
			}
		}
	}
	for _, m := range OutgoingMoves {
		if !reach[m.From] {
			t.Errorf("row %s → %s is unreachable from PENDING", m.From, m.To)
		}
	}
}

// TestPendingReason_R_TXN_30: a pendingReason is one of the known values,
// only on a PENDING transaction, and leaving PENDING clears it.
func TestPendingReason_R_TXN_30(t *testing.T) {
	row := store.Transaction{ID: "Transaction:x", Type: TypeIncoming, Status: StatusPending}
	if _, _, err := apply(&row, Change{PendingReason: "WAITING"}); err == nil {
		t.Fatal("an unknown pendingReason was accepted")
	}
	if _, _, err := apply(&row, Change{PendingReason: PendingComplianceReview}); err != nil || row.PendingReason != PendingComplianceReview {
		t.Fatalf("set: %v %q", err, row.PendingReason)
	}
	if _, _, err := apply(&row, Change{Status: StatusCompleted}); err != nil || row.PendingReason != "" {
		t.Fatalf("leaving PENDING kept %q (%v)", row.PendingReason, err)
	}
	if _, _, err := apply(&row, Change{PendingReason: PendingComplianceReview}); err == nil {
		t.Fatal("a pendingReason on a COMPLETED transaction was accepted")
	}
}
