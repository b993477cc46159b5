package transactions

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

func renderRow(t testing.TB) store.Transaction {
	now := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)
	src, _ := json.Marshal(Source{SourceType: "ACCOUNT", AccountID: "InternalAccount:a", Currency: "USD"})
	dst, _ := json.Marshal(Destination{DestinationType: "ACCOUNT", AccountID: "InternalAccount:b", Currency: "USD"})
	received := int64(990)
	return store.Transaction{ID: "Transaction:1", Type: TypeOutgoing, Status: StatusPending, Direction: Debit,
		Source: src, Destination: dst, SentAmount: 1000, SentCurrency: "USD", ReceivedAmount: &received,
		ReceivedCurrency: "USD", ExchangeRate: "1", CreatedAt: now, UpdatedAt: now}
}

// A renderer parses a side again only when its stored JSON changed: each of
// its renders equals Render's of the same row, before and after a side
// changes (a change's rail details), and going back.
func TestRenderer_ReparsesOnlyChangedSides(t *testing.T) {
	r := new(renderer)
	row := renderRow(t)
	withRail := row
	var err error
	if withRail.Destination, err = setRailDetails(row.Destination, json.RawMessage(`{"paymentRail":"ONCHAIN","transactionHash":"0xab"}`)); err != nil {
		t.Fatal(err)
	}
	withRail.Status = StatusCompleted
	for i, x := range []store.Transaction{row, row, withRail, withRail, row} {
		got, err := r.render(x)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Render(x)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("render %d:\n got  %+v\n want %+v", i, got, want)
		}
	}
	if got, _ := r.render(withRail); got.Destination.OnChainTransaction == nil {
		t.Fatal("the changed destination's rail details were not parsed")
	}
	// A side that fails to parse is an error, not the last good parse.
	bad := row
	bad.Source = []byte(`{`)
	if _, err := r.render(bad); err == nil {
		t.Fatal("rendered a row whose source is not JSON")
	}
}

// BenchmarkRenderSteps: RecordChanged renders a transfer's transaction
// four times (creation, two changes, stored), its sides unchanged:
// go test -bench RenderSteps ./internal/transactions.
func BenchmarkRenderSteps(b *testing.B) {
	row := renderRow(b)
	b.Run("renderer", func(b *testing.B) {
		for b.Loop() {
			r := new(renderer)
			for range 4 {
				if _, err := r.render(row); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("Render", func(b *testing.B) {
		for b.Loop() {
			for range 4 {
				if _, err := Render(row); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
