package quotes

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Concurrent immediate transfers share batches, whose transactions rows go
// in at the commit (store.CreateTransactionAtCommit): the transfer refused
// for insufficient funds writes no row, every other one writes its
// OUTGOING and INCOMING rows once, each as a read answers it (the owner's
// platformCustomerId included), and the counters match the rows.
func TestCreate_ImmediateBatchWritesEachTransactionOnce(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		dest := f.customer(true)
		dst := f.account(dest, "USD")
		type sender struct {
			src   store.InternalAccount
			funds int64
		}
		var senders []sender
		for i := range 6 {
			funds := int64(5_000)
			if i == 2 {
				funds = 100 // short of the 1,000 it sends
			}
			a := f.account(f.customer(true), "USD")
			f.fund(a, funds)
			senders = append(senders, sender{a, funds})
		}
		quotes := make([]Quote, len(senders))
		errs := make([]error, len(senders))
		var wg sync.WaitGroup
		for i, s := range senders {
			wg.Go(func() {
				r := req(s.src.ID, dst.ID, "SENDING", 1_000)
				r.ImmediatelyExecute = ptr(true)
				quotes[i], errs[i] = f.svc.Create(context.Background(), f.tn, r)
			})
		}
		wg.Wait()
		platformID := func(customerID string) string {
			c, err := f.db.Read().GetCustomer(f.ctx, f.tn, customerID, false)
			if err != nil {
				t.Fatal(err)
			}
			return c.PlatformCustomerID
		}
		rows := 0
		for i, s := range senders {
			if s.funds < 1_000 {
				if code(errs[i]) != "INSUFFICIENT_FUNDS" {
					t.Fatalf("short sender: %v, want INSUFFICIENT_FUNDS", errs[i])
				}
				continue
			}
			if errs[i] != nil {
				t.Fatalf("sender %d: %v", i, errs[i])
			}
			out, err := f.db.Read().GetTransaction(f.ctx, f.tn, quotes[i].TransactionID)
			if err != nil {
				t.Fatal(err)
			}
			if out.Type != transactions.TypeOutgoing || out.Status != transactions.StatusCompleted ||
				out.PlatformCustomerID != platformID(s.src.CustomerID) {
				t.Fatalf("outgoing %+v", out)
			}
			in, _, err := f.db.Read().ListTransactions(f.ctx, f.tn, store.TransactionFilter{
				Reference: quotes[i].TransactionID, Type: transactions.TypeIncoming}, "", 10)
			if err != nil || len(in) != 1 || in[0].PlatformCustomerID != platformID(dest) || in[0].CustomerID != dest {
				t.Fatalf("incoming of %s: %+v (%v), want one", quotes[i].TransactionID, in, err)
			}
			for _, x := range []store.Transaction{out, in[0]} {
				f.eventsShow(x)
			}
			rows += 2
		}
		all, total, err := f.db.Read().ListTransactions(f.ctx, f.tn, store.TransactionFilter{}, "", 100)
		if err != nil || len(all) != rows || total != rows {
			t.Fatalf("%d rows, counter %d (%v); want %d", len(all), total, err, rows)
		}
		if _, total, err := f.db.Read().ListTransactions(f.ctx, f.tn, store.TransactionFilter{CustomerID: dest}, "", 100); err != nil || total != rows/2 {
			t.Fatalf("destination's counter %d (%v), want %d", total, err, rows/2)
		}
		if f.balance(dst).Posted != int64(rows/2)*1_000 {
			t.Fatalf("destination holds %d", f.balance(dst).Posted)
		}
		f.audit()
	})
}

// eventsShow checks that every event of x carries x's platformCustomerId as
// a read answers it (the events are rendered before the row is inserted).
func (f *fx) eventsShow(x store.Transaction) {
	f.t.Helper()
	evs, err := f.db.Read().EventsForCustomer(f.ctx, f.tn, x.ID)
	if err != nil || len(evs) == 0 {
		f.t.Fatalf("events of %s: %d (%v)", x.ID, len(evs), err)
	}
	for _, e := range evs {
		var env struct {
			Data struct{ PlatformCustomerID string }
		}
		if err := json.Unmarshal(e.Envelope, &env); err != nil {
			f.t.Fatal(err)
		}
		if env.Data.PlatformCustomerID != x.PlatformCustomerID {
			f.t.Fatalf("event of %s shows platformCustomerId %q, a read %q", x.ID, env.Data.PlatformCustomerID, x.PlatformCustomerID)
		}
	}
}
