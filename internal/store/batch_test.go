package store_test

import (
	"context"
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
		// SQLite has its one writer; PostgreSQL the workers asked for.
		if want := map[store.Engine]int{store.SQLite: 1, store.Postgres: 2}[db.Engine()]; st.Workers != want || st.Busy <= 0 {
			t.Fatalf("workers %d (want %d), busy %s (want > 0)", st.Workers, want, st.Busy)
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

// batchInOrder runs fns through InBatchTx so that they share one batch, in
// order: a first call holds the batcher while the others queue (one
// worker), each queued after the one before is waiting.
func batchInOrder(t *testing.T, db *store.DB, fns ...func(*store.Tx) error) []error {
	t.Helper()
	hold, held := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = db.InBatchTx(ctx, func(*store.Tx) error { close(held); <-hold; return nil })
	})
	<-held
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Go(func() { errs[i] = db.InBatchTx(ctx, fn) })
		time.Sleep(30 * time.Millisecond) // queued behind the one before
	}
	close(hold)
	wg.Wait()
	return errs
}

func insertPlatformFn(p store.Platform) func(*store.Tx) error {
	return func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }
}

func committed(t *testing.T, db *store.DB, platformID string) bool {
	t.Helper()
	_, err := db.Read().GetPlatform(ctx, platformID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// A caller refused on the strength of an earlier caller's uncommitted
// change is answered only after the batch commits, and when the batch does
// not commit it runs again: here "bad" creates a row and breaks the commit
// (a deferred foreign key), "dependent" refuses while that row exists, and
// must end up committed, not refused for a row that never existed; the
// unrelated callers before and after bad commit too, and only bad fails.
func TestInBatchTx_RefusalsWaitForTheCommit(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 1}, func(t *testing.T, db *store.DB) {
		for _, q := range []string{"CREATE TABLE bt_parent (id TEXT PRIMARY KEY)",
			"CREATE TABLE bt_child (id TEXT PRIMARY KEY, parent TEXT REFERENCES bt_parent (id) DEFERRABLE INITIALLY DEFERRED)"} {
			if err := db.ExecRaw(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		errSaw := errors.New("refused: saw bad's uncommitted row")
		before, after, dependent := newPlatform("before"), newPlatform("after"), newPlatform("dependent")
		errs := batchInOrder(t, db,
			insertPlatformFn(before),
			func(tx *store.Tx) error {
				if err := tx.ExecForTest(ctx, "INSERT INTO bt_parent (id) VALUES ('spent')"); err != nil {
					return err
				}
				return tx.ExecForTest(ctx, "INSERT INTO bt_child (id, parent) VALUES ('c', 'missing')")
			},
			func(tx *store.Tx) error {
				var n int
				if err := tx.QueryRowForTest(ctx, "SELECT COUNT(*) FROM bt_parent", &n); err != nil {
					return err
				}
				if n > 0 {
					return errSaw
				}
				return tx.InsertPlatform(ctx, dependent)
			},
			insertPlatformFn(after))
		if errs[1] == nil {
			t.Fatal("the caller that broke the commit succeeded")
		}
		for i, p := range []store.Platform{before, dependent, after} {
			k := []int{0, 2, 3}[i]
			if errs[k] != nil || !committed(t, db, p.ID) {
				t.Fatalf("%s: err %v, committed %v; want committed", p.Name, errs[k], committed(t, db, p.ID))
			}
		}
		var n int
		if err := db.Read().QueryRowForTest(ctx, "SELECT COUNT(*) FROM bt_parent", &n); err != nil || n != 0 {
			t.Fatalf("bad's row: %d (%v)", n, err)
		}
	})
}

// A caller's own queued insert (InsertQuoteAtCommit) that hits a unique
// key fails that caller alone; the others in its batch commit.
func TestInBatchTx_QueuedWriteConflictIsTheCallersOwn(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 1}, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		now := db.Now().UTC().Truncate(time.Microsecond)
		q := store.Quote{ID: id.New(id.Quote), Tenant: tn, Status: "PENDING", TransactionID: id.New(id.Transaction),
			Document: []byte(`{}`), ExpiresAt: now.Add(time.Hour), CreatedAt: now, UpdatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertQuote(ctx, q) }); err != nil {
			t.Fatal(err)
		}
		one, two := newPlatform("one"), newPlatform("two")
		errs := batchInOrder(t, db,
			insertPlatformFn(one),
			func(tx *store.Tx) error { return tx.InsertQuoteAtCommit(q) }, // the same id again
			insertPlatformFn(two))
		if !errors.Is(errs[1], store.ErrConflict) {
			t.Fatalf("duplicate quote: %v; want ErrConflict", errs[1])
		}
		if errs[0] != nil || errs[2] != nil || !committed(t, db, one.ID) || !committed(t, db, two.ID) {
			t.Fatalf("unrelated callers: %v, %v; want both committed", errs[0], errs[2])
		}
	})
}

func newPlatform(name string) store.Platform {
	return store.Platform{ID: id.New(id.Platform), Name: name, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

// A fn's savepoint opens with its first statement (or never, when it sends
// none), so a fn that fails after sending nothing rolls nothing back: not
// the savepoint of an earlier fn that did send. One that fails after
// sending rolls back to its own, and the fns around it commit.
func TestInBatchTx_LazySavepointRollsBackOnlyTheFnsOwn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		boom := errors.New("boom")
		ids := make([]string, 6)
		insert := func(i int) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				ids[i] = id.New(id.Platform)
				return tx.InsertPlatform(ctx, store.Platform{ID: ids[i], Name: fmt.Sprint(i), CreatedAt: time.Now()})
			}
		}
		fail := func(*store.Tx) error { return boom }
		failAfter := func(i int) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				if err := insert(i)(tx); err != nil {
					return err
				}
				return boom
			}
		}
		nothing := func(*store.Tx) error { return nil }
		errs := db.RunBatchForTest(tn, nil, insert(0), fail, failAfter(2), nothing, fail, insert(5))
		want := []error{nil, boom, boom, nil, boom, nil}
		for i := range want {
			if !errors.Is(errs[i], want[i]) {
				t.Fatalf("fn %d answered %v, want %v (all: %v)", i, errs[i], want[i], errs)
			}
		}
		for i, committed := range map[int]bool{0: true, 2: false, 5: true} {
			if _, err := db.Read().GetPlatform(ctx, ids[i]); (err == nil) != committed {
				t.Fatalf("fn %d's platform: %v, want committed %v", i, err, committed)
			}
		}
	})
}

// A fn whose first statement is a query with arguments (the webhook
// finish's) sends its savepoint with it, in one round trip on PostgreSQL: the
// query sees what earlier fns wrote, and a query that fails rolls back to
// the fn's own savepoint, so the fns around it still commit. A failure of
// the pipeline's savepoint statements themselves ends the batch.
func TestInBatchTx_QueryCarriesTheSavepoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		first, later := newPlatform("first"), newPlatform("later")
		var seen []string
		insert := func(p store.Platform) func(*store.Tx) error {
			return func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }
		}
		read := func(tx *store.Tx) (err error) {
			seen, err = tx.QueryEachForTest(ctx, "SELECT name FROM platforms WHERE id = ? OR id = ? ORDER BY name",
				first.ID, later.ID)
			return err
		}
		// A query that fails as it runs (not as it is parsed: PostgreSQL
		// would refuse the whole pipeline, savepoint and all, and the batch
		// would end).
		failingQuery := "SELECT name FROM platforms WHERE id = ? AND json_extract(name, '$') IS NOT NULL"
		if db.Engine() == store.Postgres {
			failingQuery = "SELECT name FROM platforms WHERE id = ? AND CAST(name AS INTEGER) = 1"
		}
		wrote := newPlatform("undone")
		failing := func(tx *store.Tx) error {
			if err := tx.InsertPlatform(ctx, wrote); err != nil {
				return err
			}
			_, err := tx.QueryEachForTest(ctx, failingQuery, first.ID)
			return err
		}
		failsFirst := func(tx *store.Tx) error {
			_, err := tx.QueryEachForTest(ctx, failingQuery, first.ID)
			return err
		}
		errs := db.RunBatchForTest(tn, nil, insert(first), read, failsFirst, failing, insert(later))
		if errs[0] != nil || errs[1] != nil || errs[4] != nil {
			t.Fatalf("the fns around the failing queries: %v", errs)
		}
		if errs[2] == nil || errs[3] == nil {
			t.Fatalf("the failing queries were answered %v and %v", errs[2], errs[3])
		}
		if len(seen) != 1 || seen[0] != "first" {
			t.Fatalf("the query saw %q, want the earlier fn's row alone", seen)
		}
		for p, committed := range map[store.Platform]bool{first: true, later: true, wrote: false} {
			if _, err := db.Read().GetPlatform(ctx, p.ID); (err == nil) != committed {
				t.Fatalf("platform %q: %v, want committed %v", p.Name, err, committed)
			}
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		broken := func(tx *store.Tx) error {
			_, err := tx.QueryEachForTest(cancelled, "SELECT name FROM platforms WHERE id = ?", first.ID)
			return err
		}
		for i, err := range db.RunBatchForTest(tn, nil, insert(newPlatform("a")), broken, insert(newPlatform("b"))) {
			if !errors.Is(err, store.ErrBatchRedoForTest) {
				t.Fatalf("fn %d after a savepoint that may not have opened: %v, want it run again", i, err)
			}
		}
	})
}

// A fn whose savepoint cannot open (here: its statement's context is
// already cancelled), or may not have (the statement that carried it
// failed), ends the batch: every fn, that one too, runs again, none is left
// waiting, and none is rolled back to an earlier fn's savepoint.
func TestInBatchTx_SavepointThatFailsToOpenEndsTheBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		insert := func(c context.Context) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				return tx.InsertPlatform(c, store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: time.Now()})
			}
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		// The second fn's first statement is a savepoint of its own, which
		// on PostgreSQL carries the fn's savepoint in its message: when
		// that message fails, whether the fn's savepoint opened is unknown.
		ownSavepoint := func(tx *store.Tx) error { return tx.ExecForTest(cancelled, "SAVEPOINT volume_fast") }
		for _, second := range []func(*store.Tx) error{insert(cancelled), ownSavepoint} {
			done := make(chan []error, 1)
			go func() { done <- db.RunBatchForTest(tn, nil, insert(ctx), second, insert(ctx)) }()
			select {
			case errs := <-done:
				for i, err := range errs {
					if !errors.Is(err, store.ErrBatchRedoForTest) {
						t.Fatalf("fn %d: %v, want it run again (all: %v)", i, err, errs)
					}
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a fn of the batch was never answered")
			}
		}
	})
}
