package transactions

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// RecordChanged stores a transaction once, as its changes leave it, and
// emits what Record followed by Transitions would: one event per status,
// each with the transaction as that step left it, the last one equal to the
// transaction as read back (platformCustomerId included). The same when the
// caller gives the customer's platformCustomerId and the row is inserted at
// the commit.
func TestRecordChanged_EventsAsRecordThenTransitions(t *testing.T) {
	t.Run("inserted at once", func(t *testing.T) { recordChangedEvents(t, nil) })
	known := "pc-1"
	t.Run("inserted at commit", func(t *testing.T) { recordChangedEvents(t, &known) })
}

func recordChangedEvents(t *testing.T, platformCustomerID *string) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: now}
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		c := store.Customer{ID: id.New(id.Customer), Tenant: tn, PlatformCustomerID: "pc-1", Type: "INDIVIDUAL",
			Status: "UNVERIFIED", Currencies: []string{"USD"}, Region: "US", Profile: []byte(`{}`), CreatedAt: now, UpdatedAt: now}
		received := int64(990)
		n := New{ID: id.New(id.Transaction), Type: TypeOutgoing, Status: StatusPending, Direction: Debit,
			CustomerID: c.ID, AccountID: "InternalAccount:a", Source: Source{SourceType: "ACCOUNT", AccountID: "InternalAccount:a", Currency: "USD"},
			Destination: Destination{DestinationType: "ACCOUNT", AccountID: "InternalAccount:b", Currency: "USD"},
			SentAmount:  1000, SentCurrency: "USD", ReceivedAmount: &received, ReceivedCurrency: "USD", Fees: 10,
			Reference: "Quote:1", QuoteID: "Quote:1", ExchangeRate: "1", RateDetails: json.RawMessage(`{}`),
			PlatformCustomerID: platformCustomerID}
		var out Transaction
		var quoteStatus string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertPlatform(ctx, p); err != nil {
				return err
			}
			if err := tx.InsertCustomer(ctx, c); err != nil {
				return err
			}
			var err error
			out, quoteStatus, err = RecordChanged(ctx, tx, tn, n,
				Change{Status: StatusProcessing, HoldID: "LedgerTransfer:h"}, Change{Status: StatusCompleted, SettledAt: &now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if quoteStatus != StatusCompleted || out.Status != StatusCompleted {
			t.Fatalf("quote status %q, transaction %q", quoteStatus, out.Status)
		}
		row, err := db.Read().GetTransaction(ctx, tn, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := Render(row)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, stored) {
			t.Fatalf("answered %+v\nstored   %+v", out, stored)
		}
		evs, err := db.Read().EventsForCustomer(ctx, tn, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"}
		if len(evs) != len(want) {
			t.Fatalf("%d events, want %v", len(evs), want)
		}
		for i, e := range evs {
			var env struct {
				Type string
				Data Transaction
			}
			if err := json.Unmarshal(e.Envelope, &env); err != nil {
				t.Fatal(err)
			}
			if env.Type != want[i] || env.Data.PlatformCustomerID != "pc-1" || env.Data.ID != n.ID {
				t.Fatalf("event %d: %s %+v", i, env.Type, env.Data)
			}
			if i == len(evs)-1 {
				b1, _ := json.Marshal(env.Data)
				b2, _ := json.Marshal(stored)
				if string(b1) != string(b2) {
					t.Fatalf("last event's data\n%s\nstored\n%s", b1, b2)
				}
			}
		}
	})
}

// Transitions moves the quote's status with its transaction's, stamped with
// the time of the change.
func TestTransitions_QuoteFollowsWithTheChangeTime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
		clock := start
		db.SetClock(func() time.Time { return clock })
		p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: start}
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		n := New{ID: id.New(id.Transaction), Type: TypeOutgoing, Status: StatusPending, Direction: Debit,
			AccountID: "InternalAccount:a", SentAmount: 5, SentCurrency: "USD", QuoteID: id.New(id.Quote)}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertPlatform(ctx, p); err != nil {
				return err
			}
			if _, err := Record(ctx, tx, tn, n); err != nil {
				return err
			}
			return tx.InsertQuote(ctx, store.Quote{ID: n.QuoteID, Tenant: tn, Status: StatusPending, TransactionID: n.ID,
				Document: []byte(`{}`), ExpiresAt: start.Add(time.Hour), CreatedAt: start, UpdatedAt: start})
		}); err != nil {
			t.Fatal(err)
		}
		clock = start.Add(time.Minute)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := Transitions(ctx, tx, tn, n.ID, Change{Status: StatusProcessing})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		q, err := db.Read().GetQuote(ctx, tn, n.QuoteID, false)
		if err != nil || q.Status != StatusProcessing || !q.UpdatedAt.Equal(clock) {
			t.Fatalf("quote %s updated %s (%v); want PROCESSING at %s", q.Status, q.UpdatedAt, err, clock)
		}
	})
}
