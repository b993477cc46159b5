package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

var outboxTenant = store.Tenant{PlatformID: "Platform:outbox", Env: store.EnvSandbox}

func queued(i int) store.Event {
	return store.Event{ID: id.New(id.Event), Tenant: outboxTenant, Type: "TEST", ResourceID: fmt.Sprint("Thing:", i),
		Envelope: []byte(fmt.Sprintf(`{"n":%d}`, i)), CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

// hasEventAndDelivery reports whether both rows of a queued event exist.
func hasEventAndDelivery(t *testing.T, q store.Q, eventID string) bool {
	t.Helper()
	_, errE := q.GetEvent(ctx, outboxTenant, eventID)
	_, errD := q.GetDelivery(ctx, outboxTenant, eventID, false)
	switch {
	case errE == nil && errD == nil:
		return true
	case errors.Is(errE, store.ErrNotFound) && errors.Is(errD, store.ErrNotFound):
		return false
	}
	t.Fatalf("event %s: event %v, delivery %v (written apart)", eventID, errE, errD)
	return false
}

// Queued events commit with their transaction, every one of them (more than
// one INSERT's worth), and a read inside the transaction already sees them.
func TestOutbox_QueuedEventsCommitAndAreReadableInTx(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var es []store.Event
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := range 1201 {
				e := queued(i)
				es = append(es, e)
				if err := tx.QueueEvent(e); err != nil {
					return err
				}
				if i == 3 && !hasEventAndDelivery(t, tx.Q, es[0].ID) {
					t.Error("a read in the emitting transaction did not see its event")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if !hasEventAndDelivery(t, db.Read(), e.ID) {
				t.Fatalf("event %s lost", e.ID)
			}
		}
		d, err := db.Read().GetDelivery(ctx, outboxTenant, es[1200].ID, false)
		if err != nil || d.State != "PENDING" || d.Attempts != 0 || !d.NextAttemptAt.Equal(es[1200].CreatedAt) {
			t.Fatalf("delivery %+v %v", d, err)
		}
	})
}

// A failed transaction takes its queued events with it; outside a
// transaction there is nothing to queue into.
func TestOutbox_RollbackDropsQueuedEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queued(1)
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.QueueEvent(e); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if hasEventAndDelivery(t, db.Read(), e.ID) {
			t.Fatal("an event of a rolled-back transaction was written")
		}
		if err := db.Write().QueueEvent(queued(2)); err == nil {
			t.Fatal("QueueEvent outside a transaction was accepted")
		}
	})
}

// In a group commit each caller's events commit or roll back with that
// caller alone.
func TestOutbox_GroupCommitKeepsEventsPerCaller(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 2}, func(t *testing.T, db *store.DB) {
		const n = 60
		boom := errors.New("boom")
		ids := make([][]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[i] = db.InBatchTx(ctx, func(tx *store.Tx) error {
					ids[i] = nil
					for j := range 3 {
						e := queued(i*10 + j)
						ids[i] = append(ids[i], e.ID)
						if err := tx.QueueEvent(e); err != nil {
							return err
						}
					}
					time.Sleep(time.Millisecond) // let others join the batch
					if i%3 == 1 {
						return boom
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i := range n {
			want := i%3 != 1
			if want != (errs[i] == nil) {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			for _, eid := range ids[i] {
				if got := hasEventAndDelivery(t, db.Read(), eid); got != want {
					t.Fatalf("caller %d event %s: written %v, want %v", i, eid, got, want)
				}
			}
		}
	})
}

// A quote queued for the commit is written with it, and a read through the
// same transaction sees it already; a rollback drops it.
func TestOutbox_QueuedQuoteWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		cust := mustCustomers(t, db, tn, "q-1")[0]
		now := db.Now().UTC().Truncate(time.Microsecond)
		quote := func() store.Quote {
			return store.Quote{ID: id.New(id.Quote), Tenant: tn, Status: "COMPLETED", TransactionID: id.New(id.Transaction),
				CustomerID: cust, Document: []byte(`{}`), USDEquivalent: 5, ExpiresAt: now.Add(time.Minute),
				ExecutedAt: &now, CreatedAt: now, UpdatedAt: now}
		}
		kept, dropped := quote(), quote()
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertQuoteAtCommit(kept); err != nil {
				return err
			}
			got, err := tx.GetQuote(ctx, tn, kept.ID, true)
			if err != nil || got.Status != "COMPLETED" {
				t.Errorf("read in the transaction: %+v %v", got, err)
			}
			return tx.InsertQuoteAtCommit(quote()) // written at the commit
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := db.Read().CountQuotes(ctx, tn); err != nil || n != 2 {
			t.Fatalf("%d quotes, %v; want 2", n, err)
		}
		boom := errors.New("boom")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertQuoteAtCommit(dropped); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if _, err := db.Read().GetQuote(ctx, tn, dropped.ID, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a rolled-back queued quote: %v", err)
		}
		if err := db.Write().InsertQuoteAtCommit(quote()); err == nil {
			t.Fatal("queued outside a transaction")
		}
	})
}
