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

// Group commit: concurrent InBatchTx calls share commits, yet each keeps
// InTx's contract — its changes commit when it returns nil, and roll back
// alone when it fails, panics, or violates a constraint.
func TestInBatchTx_SharedCommitsIndependentOutcomes(t *testing.T) {
	// PostgreSQL batches only when asked (store.Options.BatchWorkers).
	storetest.EachWith(t, store.Options{BatchWorkers: 2}, func(t *testing.T, db *store.DB) {
		boom := errors.New("boom")
		taken := store.Platform{ID: id.New(id.Platform), Name: "taken", CreatedAt: time.Now()}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, taken) }); err != nil {
			t.Fatal(err)
		}
		const n = 120
		errs := make([]error, n)
		panics := make([]any, n)
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			ids[i] = id.New(id.Platform)
			wg.Go(func() {
				defer func() { panics[i] = recover() }()
				errs[i] = db.InBatchTx(ctx, func(tx *store.Tx) error {
					if err := tx.InsertPlatform(ctx, store.Platform{ID: ids[i], Name: fmt.Sprint(i), CreatedAt: time.Now()}); err != nil {
						return err
					}
					time.Sleep(time.Millisecond) // let others queue behind this batch
					switch i % 4 {
					case 1:
						return boom
					case 2:
						// A constraint violation aborts the statement (on
						// PostgreSQL, the transaction, until the savepoint
						// is rolled back).
						return tx.InsertPlatform(ctx, taken)
					case 3:
						if i%8 == 7 {
							panic("fn panicked")
						}
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i := range n {
			_, getErr := db.Read().GetPlatform(ctx, ids[i])
			committed := getErr == nil
			switch {
			case i%4 == 1:
				if !errors.Is(errs[i], boom) || committed {
					t.Fatalf("%d: err %v, committed %v; want boom, rolled back", i, errs[i], committed)
				}
			case i%4 == 2:
				if !errors.Is(errs[i], store.ErrConflict) || committed {
					t.Fatalf("%d: err %v, committed %v; want ErrConflict, rolled back", i, errs[i], committed)
				}
			case i%8 == 7:
				if panics[i] != "fn panicked" || committed {
					t.Fatalf("%d: panic %v, committed %v; want the panic in the caller, rolled back", i, panics[i], committed)
				}
			default:
				if errs[i] != nil || panics[i] != nil || !committed {
					t.Fatalf("%d: err %v, panic %v, committed %v; want committed", i, errs[i], panics[i], committed)
				}
			}
		}
		st := db.BatchStats()
		if st.Transactions == 0 || st.Commits >= st.Transactions {
			t.Fatalf("no commit was shared: %+v", st)
		}
		t.Logf("%d successful transactions in %d commits", st.Transactions, st.Commits)
	})
}

// After Close, InBatchTx refuses instead of hanging.
func TestInBatchTx_AfterClose(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 2}, func(t *testing.T, db *store.DB) {
		if err := db.InBatchTx(ctx, func(tx *store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if err := db.InBatchTx(ctx, func(tx *store.Tx) error { return nil }); err == nil {
			t.Fatal("InBatchTx after Close succeeded")
		}
	})
}

// Transaction counters stay exact through group commits: a fn rolled back to
// its savepoint takes its counts with it (R-CONV-10's totalCount).
func TestInBatchTx_TransactionCountsExact(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 2}, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		customers := mustCustomers(t, db, tn, "c1", "c2", "c3")
		boom := errors.New("boom")
		var wg sync.WaitGroup
		for i := range 60 {
			wg.Go(func() {
				err := db.InBatchTx(ctx, func(tx *store.Tx) error {
					x := txnRow(tn, customers[i%3], "OUTGOING", "COMPLETED", time.Now())
					if i%5 == 0 {
						x.CustomerID = "" // the platform's own
					}
					if _, err := tx.CreateTransaction(ctx, x); err != nil {
						return err
					}
					if i%4 == 1 {
						return boom
					}
					return nil
				})
				if err != nil && !errors.Is(err, boom) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got := checkCounters(t, db)
		if len(got) == 0 {
			t.Fatal("no counters")
		}
	})
}
