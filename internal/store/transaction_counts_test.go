package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// txnRow is a transaction of customerID ("" for the platform's own).
func txnRow(tn store.Tenant, customerID, typ, status string, at time.Time) store.Transaction {
	return store.Transaction{ID: id.New(id.Transaction), Tenant: tn, Type: typ, Status: status, Direction: "CREDIT",
		CustomerID: customerID, AccountID: "InternalAccount:a", Source: []byte(`{}`), Destination: []byte(`{}`),
		SentAmount: 1, SentCurrency: "USD", Reference: "ref-" + typ, CreatedAt: at, UpdatedAt: at}
}

// deleteCustomer marks a customer of tn deleted.
func deleteCustomer(t *testing.T, db *store.DB, tn store.Tenant, customerID string) {
	t.Helper()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.GetCustomer(ctx, tn, customerID, true)
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		c.DeletedAt = &now
		return tx.UpdateCustomer(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mustCustomers(t *testing.T, db *store.DB, tn store.Tenant, pcids ...string) []string {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	var ids []string
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, p := range pcids {
			c := custRow(tn, p, now)
			ids = append(ids, c.ID)
			if err := tx.InsertCustomer(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func mustInsert(t testing.TB, db *store.DB, xs ...store.Transaction) {
	t.Helper()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, x := range xs {
			if _, err := tx.CreateTransaction(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkCounters fails unless every scope's counter equals its true count.
func checkCounters(t *testing.T, db *store.DB) map[string]int64 {
	t.Helper()
	got, want, err := db.TransactionCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("counters %v, true counts %v", got, want)
	}
	return got
}

// scopeTotal sums the counters of one scope ("platform/env/scope") over its
// types and statuses.
func scopeTotal(counters map[string]int64, scope string) int64 {
	var n int64
	for k, v := range counters {
		if strings.HasPrefix(k, scope+"/") {
			n += v
		}
	}
	return n
}

// listAll pages through f and checks totalCount on every page against the
// rows listed in all.
func listAll(t *testing.T, q store.Q, tn store.Tenant, f store.TransactionFilter) int {
	t.Helper()
	return pageTotals(t, fmt.Sprintf("filter %+v", f), func(after string) (int, string, int, error) {
		rows, total, err := q.ListTransactions(ctx, tn, f, after, 3)
		if err != nil || len(rows) == 0 {
			return 0, "", total, err
		}
		return len(rows), rows[len(rows)-1].ID, total, nil
	})
}

// pageTotals pages through a list three at a time (page: the rows after
// `after`, how many, the last one's id and totalCount) and checks totalCount
// on every page against the rows listed in all, which it returns.
func pageTotals(t *testing.T, what string, page func(after string) (n int, last string, total int, err error)) int {
	t.Helper()
	var totals []int
	n, after := 0, ""
	for {
		got, last, total, err := page(after)
		if err != nil {
			t.Fatal(err)
		}
		totals = append(totals, total)
		n += got
		if got < 3 {
			break
		}
		after = last
	}
	for _, total := range totals {
		if total != n {
			t.Fatalf("%s: totalCount per page %v, %d rows listed", what, totals, n)
		}
	}
	return n
}

// totalCount of GET /transactions is exact for every counted scope and for
// the filters that still count rows, in both orders and on every page, per
// tenant.
func TestTransactionCounts_ListTotals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "p-1", "p-2", "p-3")
		other := mustCustomers(t, db, prd, "p-1")[0]
		now := db.Now().UTC().Truncate(time.Microsecond)
		// Several per database transaction, mixing owners, and one at a time.
		mustInsert(t, db, txnRow(sbx, cs[0], "INCOMING", "COMPLETED", now), txnRow(sbx, cs[1], "OUTGOING", "PENDING", now),
			txnRow(sbx, "", "INCOMING", "COMPLETED", now), txnRow(sbx, cs[0], "OUTGOING", "COMPLETED", now))
		for i := range 7 {
			mustInsert(t, db, txnRow(sbx, cs[i%2], "INCOMING", "COMPLETED", now.Add(time.Duration(i)*time.Second)))
		}
		mustInsert(t, db, txnRow(sbx, "", "OUTGOING", "FAILED", now), txnRow(prd, other, "INCOMING", "COMPLETED", now))
		checkCounters(t, db)

		for _, c := range []struct {
			f       store.TransactionFilter
			want    int
			counted bool
		}{
			{store.TransactionFilter{}, 12, true},
			{store.TransactionFilter{Descending: true}, 12, true},
			{store.TransactionFilter{CustomerID: cs[0]}, 6, true},
			{store.TransactionFilter{CustomerID: cs[1], Descending: true}, 4, true},
			{store.TransactionFilter{CustomerID: cs[2]}, 0, true},
			{store.TransactionFilter{CustomerID: other}, 0, true}, // another tenant's customer
			{store.TransactionFilter{PlatformOnly: true}, 2, true},
			{store.TransactionFilter{PlatformCustomerID: "p-2"}, 4, true},
			{store.TransactionFilter{PlatformCustomerID: "p-3"}, 0, true},
			{store.TransactionFilter{PlatformCustomerID: "nobody"}, 0, true},
			{store.TransactionFilter{Type: "OUTGOING"}, 3, true},
			{store.TransactionFilter{Status: "COMPLETED", Descending: true}, 10, true},
			{store.TransactionFilter{Type: "OUTGOING", Status: "COMPLETED"}, 1, true},
			{store.TransactionFilter{Type: "CARD"}, 0, true},
			{store.TransactionFilter{CustomerID: cs[0], Status: "COMPLETED"}, 6, true},
			{store.TransactionFilter{CustomerID: cs[1], Type: "OUTGOING", Status: "PENDING"}, 1, true},
			{store.TransactionFilter{PlatformOnly: true, Type: "INCOMING"}, 1, true},
			{store.TransactionFilter{PlatformOnly: true, Status: "FAILED"}, 1, true},
			{store.TransactionFilter{CustomerID: other, Status: "COMPLETED"}, 0, true}, // another tenant's customer
			{store.TransactionFilter{Status: "COMPLETED", Reference: "ref-INCOMING"}, 9, false},
			{store.TransactionFilter{Reference: "ref-INCOMING"}, 9, false},
			{store.TransactionFilter{CreatedAfter: new(now.Add(3 * time.Second))}, 4, false},
			// A time window reads its rows' id range (transactionWindow).
			{store.TransactionFilter{CreatedAfter: new(now.Add(3 * time.Second)), Descending: true}, 4, false},
			{store.TransactionFilter{CreatedAfter: new(now.Add(time.Second)), CreatedBefore: new(now.Add(4 * time.Second))}, 4, false},
			{store.TransactionFilter{CreatedAfter: new(now.Add(time.Second)), CreatedBefore: new(now.Add(4 * time.Second)),
				CustomerID: cs[0], Descending: true}, 2, false},
			{store.TransactionFilter{CreatedBefore: new(now)}, 6, false},
			{store.TransactionFilter{CreatedAfter: new(now.Add(time.Hour))}, 0, false},
			// Another customer's platformCustomerId: no row, nothing counted.
			{store.TransactionFilter{CustomerID: cs[0], PlatformCustomerID: "p-2"}, 0, true},
			{store.TransactionFilter{CustomerID: cs[1], PlatformCustomerID: "p-2"}, 4, true},
			{store.TransactionFilter{PlatformOnly: true, PlatformCustomerID: "p-2"}, 0, false},
			{store.TransactionFilter{PlatformCustomerID: "p-2", Type: "INCOMING"}, 3, true},
			{store.TransactionFilter{PlatformOnly: true, PlatformCustomerID: "p-2", Status: "COMPLETED"}, 0, false},
		} {
			if got := store.Counted(c.f); got != c.counted {
				t.Errorf("%+v: counted %v, want %v", c.f, got, c.counted)
			}
			if n := listAll(t, db.Read(), sbx, c.f); n != c.want {
				t.Errorf("%+v: %d rows, want %d", c.f, n, c.want)
			}
		}
		if n := listAll(t, db.Read(), prd, store.TransactionFilter{}); n != 1 {
			t.Fatalf("production: %d", n)
		}
		if n := listAll(t, db.Read(), prd, store.TransactionFilter{PlatformCustomerID: "p-1"}); n != 1 {
			t.Fatalf("production p-1: %d", n)
		}

		// A deleted customer's platformCustomerId no longer matches, and a
		// new customer may take it.
		deleteCustomer(t, db, sbx, cs[1])
		reused := mustCustomers(t, db, sbx, "p-2")[0]
		mustInsert(t, db, txnRow(sbx, reused, "INCOMING", "COMPLETED", now))
		if n := listAll(t, db.Read(), sbx, store.TransactionFilter{PlatformCustomerID: "p-2"}); n != 1 {
			t.Fatalf("p-2 after reuse: %d", n)
		}
		if n := listAll(t, db.Read(), sbx, store.TransactionFilter{CustomerID: cs[1]}); n != 4 {
			t.Fatalf("deleted customer by id: %d", n)
		}
		checkCounters(t, db)
	})
}

// oneCustomer makes a platform with a customer ("p-1") in its sandbox, and
// reads the store clock.
func oneCustomer(t *testing.T, db *store.DB) (store.Tenant, string, time.Time) {
	t.Helper()
	p := mustPlatform(t, db, true)
	tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	return tn, mustCustomers(t, db, tn, "p-1")[0], db.Now().UTC().Truncate(time.Microsecond)
}

// Inside a transaction that inserted rows, the total still includes them
// (the counters only catch up at commit); a rolled-back insert is not
// counted; inserting outside InTx is refused, writing nothing, rather than
// left uncounted.
func TestTransactionCounts_InsideTxAndRollback(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, c, now := oneCustomer(t, db)
		mustInsert(t, db, txnRow(tn, c, "INCOMING", "COMPLETED", now))
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateTransaction(ctx, txnRow(tn, c, "INCOMING", "COMPLETED", now)); err != nil {
				return err
			}
			for _, f := range []store.TransactionFilter{{}, {CustomerID: c}} {
				if _, total, err := tx.ListTransactions(ctx, tn, f, "", 10); err != nil || total != 2 {
					t.Errorf("%+v inside the transaction: %d, %v", f, total, err)
				}
			}
			return fmt.Errorf("roll back")
		})
		if err == nil {
			t.Fatal("no rollback")
		}
		if n := listAll(t, db.Read(), tn, store.TransactionFilter{}); n != 1 {
			t.Fatalf("after rollback: %d", n)
		}
		checkCounters(t, db)
		if _, err := db.Write().CreateTransaction(ctx, txnRow(tn, c, "INCOMING", "COMPLETED", now)); err == nil {
			t.Fatal("insert outside InTx accepted")
		}
		if n := listAll(t, db.Read(), tn, store.TransactionFilter{}); n != 1 {
			t.Fatalf("a refused insert outside InTx wrote a row: %d", n)
		}
		checkCounters(t, db)
	})
}

// setStatus changes the status of transaction id of tn inside tx, as
// transactions.Transitions does: read the row locked, write it back.
func setStatus(tx *store.Tx, tn store.Tenant, id, status string) error {
	row, err := tx.GetTransactionForUpdate(ctx, tn, id)
	if err != nil {
		return err
	}
	row.Status = status
	return tx.UpdateTransaction(ctx, row)
}

// A status change moves the transaction's count from its old status to its
// new one for its tenant and its owner: made alone, in the database
// transaction that inserted it, there and back again, through the batch
// committer, or rolled back; an update that leaves the status as it was
// moves nothing. Every total by status stays exact, read from the counters.
func TestTransactionCounts_StatusChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, c, now := oneCustomer(t, db)
		a, b := txnRow(tn, c, "OUTGOING", "PENDING", now), txnRow(tn, "", "OUTGOING", "PENDING", now)
		mustInsert(t, db, a, b)
		change := func(in func(context.Context, func(*store.Tx) error) error, id string, statuses ...string) {
			t.Helper()
			err := in(ctx, func(tx *store.Tx) error {
				for _, st := range statuses {
					if err := setStatus(tx, tn, id, st); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		want := func(byStatus map[string]int) {
			t.Helper()
			checkCounters(t, db)
			for _, st := range []string{"PENDING", "PROCESSING", "COMPLETED", "FAILED"} {
				for _, f := range []store.TransactionFilter{{Status: st}, {Status: st, Type: "OUTGOING"}} {
					if n := listAll(t, db.Read(), tn, f); n != byStatus[st] {
						t.Fatalf("%+v: %d, want %d", f, n, byStatus[st])
					}
				}
			}
		}
		change(db.InTx, a.ID, "PROCESSING")
		want(map[string]int{"PENDING": 1, "PROCESSING": 1})
		change(db.InBatchTx, a.ID, "COMPLETED")
		change(db.InTx, b.ID, "PROCESSING", "PENDING") // there and back
		want(map[string]int{"PENDING": 1, "COMPLETED": 1})
		change(db.InTx, a.ID, "COMPLETED") // other fields only
		want(map[string]int{"PENDING": 1, "COMPLETED": 1})

		// Inserted and moved on in one database transaction.
		x := txnRow(tn, c, "OUTGOING", "PENDING", now)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateTransaction(ctx, x); err != nil {
				return err
			}
			return setStatus(tx, tn, x.ID, "FAILED")
		})
		if err != nil {
			t.Fatal(err)
		}
		want(map[string]int{"PENDING": 1, "COMPLETED": 1, "FAILED": 1})
		if n := listAll(t, db.Read(), tn, store.TransactionFilter{CustomerID: c, Status: "FAILED"}); n != 1 {
			t.Fatalf("the customer's FAILED: %d", n)
		}

		// Rolled back, unknown, or outside a transaction: nothing moves.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := setStatus(tx, tn, b.ID, "COMPLETED"); err != nil {
				return err
			}
			return fmt.Errorf("roll back")
		})
		if err == nil {
			t.Fatal("no rollback")
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			gone := txnRow(tn, c, "OUTGOING", "COMPLETED", now)
			return tx.UpdateTransaction(ctx, gone)
		})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown transaction: %v", err)
		}
		row, err := db.Read().GetTransaction(ctx, tn, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		row.Status = "COMPLETED"
		if err := db.Write().UpdateTransaction(ctx, row); err == nil {
			t.Fatal("update outside a transaction accepted")
		}
		want(map[string]int{"PENDING": 1, "COMPLETED": 1, "FAILED": 1})
	})
}

// The migration's backfill, and RebuildCounts (which replays
// it), equal what the inserts counted one by one.
func TestTransactionCounts_BackfillAndRebuild(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "p-1", "p-2")
		now := db.Now().UTC().Truncate(time.Microsecond)
		for i := range 20 {
			owner := ""
			if i%3 != 0 {
				owner = cs[i%2]
			}
			mustInsert(t, db, txnRow(sbx, owner, []string{"INCOMING", "OUTGOING", "CARD"}[i%3],
				[]string{"COMPLETED", "PENDING", "FAILED", "PROCESSING"}[i%4], now),
				txnRow(prd, "", "INCOMING", "COMPLETED", now))
		}
		incremental := checkCounters(t, db)

		// Migration 0066 run on a database that already holds transactions.
		for _, q := range []string{"DROP TABLE transaction_counts", "DELETE FROM schema_migrations WHERE version = 66"} {
			if err := db.ExecRaw(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if got := checkCounters(t, db); !maps.Equal(got, incremental) {
			t.Fatalf("backfill %v, incremental %v", got, incremental)
		}

		// Rows written behind the store's back, and counters gone wrong.
		if err := db.ExecRaw(ctx, `UPDATE transaction_counts SET n = n + 5 WHERE scope = 'all'`); err != nil {
			t.Fatal(err)
		}
		if err := db.ExecRaw(ctx, `INSERT INTO transaction_counts (platform_id, env, scope, transaction_type, status, shard, n)
			VALUES (?, ?, 'customer:gone', 'INCOMING', 'COMPLETED', 3, 2)`,
			p.ID, store.EnvSandbox); err != nil {
			t.Fatal(err)
		}
		if err := db.RebuildCounts(ctx); err != nil {
			t.Fatal(err)
		}
		if got := checkCounters(t, db); !maps.Equal(got, incremental) {
			t.Fatalf("rebuilt %v, incremental %v", got, incremental)
		}
		mustInsert(t, db, txnRow(sbx, cs[0], "INCOMING", "COMPLETED", now))
		checkCounters(t, db)
	})
}

// Concurrent transfers keep the counters exact. Each inserts a sender's
// transaction and then a receiver's, in crossing orders; on PostgreSQL none
// may have to be retried (a deadlock or a serialization failure makes InTx
// run fn again).
func TestTransactionCounts_Concurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		cs := mustCustomers(t, db, tn, "p-0", "p-1", "p-2", "p-3")
		cs = append(cs, "") // the platform
		now := db.Now().UTC().Truncate(time.Microsecond)
		const workers, each = 8, 25
		var calls atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					from, to := cs[(w+i)%len(cs)], cs[(w+2*i+1)%len(cs)]
					err := db.InTx(ctx, func(tx *store.Tx) error {
						calls.Add(1)
						if _, err := tx.CreateTransaction(ctx, txnRow(tn, from, "OUTGOING", "PENDING", now)); err != nil {
							return err
						}
						_, err := tx.CreateTransaction(ctx, txnRow(tn, to, "INCOMING", "COMPLETED", now))
						return err
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if db.Engine() == store.Postgres && calls.Load() != workers*each {
			t.Errorf("%d attempts for %d transactions: some were retried", calls.Load(), workers*each)
		}
		got := checkCounters(t, db)
		if n := scopeTotal(got, p.ID+"/sandbox/all"); n != 2*workers*each {
			t.Fatalf("all = %d", n)
		}
		if n := listAll(t, db.Read(), tn, store.TransactionFilter{}); n != 2*workers*each {
			t.Fatalf("listed %d", n)
		}
	})
}

// Two transfers in opposite directions between the same customers, each
// holding its first insert until the other has made its own: the pattern
// that deadlocks if counters are locked as rows are inserted. PostgreSQL
// only: SQLite has a single writer, so the second would wait for the first.
func TestTransactionCounts_CrossingTransfersDoNotDeadlock(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		if e.Name != "postgres" {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			db := e.Open(t)
			p := mustPlatform(t, db, true)
			tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
			cs := mustCustomers(t, db, tn, "a", "b")
			now := db.Now().UTC().Truncate(time.Microsecond)
			var calls atomic.Int64
			var firstDone sync.WaitGroup
			firstDone.Add(2)
			var once [2]sync.Once
			transfer := func(i int, from, to string) error {
				return db.InTx(ctx, func(tx *store.Tx) error {
					calls.Add(1)
					if _, err := tx.CreateTransaction(ctx, txnRow(tn, from, "OUTGOING", "PENDING", now)); err != nil {
						return err
					}
					once[i].Do(firstDone.Done)
					firstDone.Wait()
					_, err := tx.CreateTransaction(ctx, txnRow(tn, to, "INCOMING", "COMPLETED", now))
					return err
				})
			}
			errs := make(chan error, 2)
			go func() { errs <- transfer(0, cs[0], cs[1]) }()
			go func() { errs <- transfer(1, cs[1], cs[0]) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if calls.Load() != 2 {
				t.Fatalf("%d attempts for 2 transfers: one was retried", calls.Load())
			}
			checkCounters(t, db)
		})
	}
}
