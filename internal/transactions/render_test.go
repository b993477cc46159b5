package transactions

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// R-TXN-15, R-TXN-16: an INCOMING transaction in status CREATED renders
// with that status and without reconciliationInstructions; in every other
// status it carries them, with the reference. CREATED may move on to
// PENDING, PROCESSING, COMPLETED or FAILED.
func TestRender_IncomingCreatedHasNoReconciliation_R_TXN_15_R_TXN_16(t *testing.T) {
	now := time.Now().UTC()
	received := int64(500)
	render := func(status string) Transaction {
		t.Helper()
		src, _ := json.Marshal(Source{SourceType: "ACCOUNT", AccountID: "InternalAccount:a", Currency: "USD"})
		dst, _ := json.Marshal(Destination{DestinationType: "ACCOUNT", AccountID: "InternalAccount:b", Currency: "USD"})
		x, err := Render(storeRow(status, src, dst, &received, now))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	created := render(StatusCreated)
	if created.Status != StatusCreated || created.ReconciliationInstructions != nil {
		t.Fatalf("CREATED: %+v", created)
	}
	b, _ := json.Marshal(created)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, ok := m["reconciliationInstructions"]; ok || m["status"] != "CREATED" {
		t.Fatalf("CREATED renders %s", b)
	}
	for _, s := range Statuses {
		if s == StatusCreated {
			continue
		}
		if x := render(s); x.ReconciliationInstructions == nil || x.ReconciliationInstructions.Reference != "REF-1" {
			t.Fatalf("%s: reconciliationInstructions %+v", s, x.ReconciliationInstructions)
		}
	}
	for _, next := range []string{StatusPending, StatusProcessing, StatusCompleted, StatusFailed} {
		if !Allowed(TypeIncoming, StatusCreated, next) {
			t.Fatalf("CREATED cannot move to %s", next)
		}
	}
}

func storeRow(status string, src, dst []byte, received *int64, now time.Time) store.Transaction {
	return store.Transaction{ID: "Transaction:1", Type: TypeIncoming, Status: status, Direction: Credit,
		Source: src, Destination: dst, SentAmount: 500, SentCurrency: "USD", ReceivedAmount: received,
		ReceivedCurrency: "USD", Reference: "REF-1", CreatedAt: now, UpdatedAt: now}
}
