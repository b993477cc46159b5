package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// A statement through the transaction that touches transactions sees the
// rows queued before it (the queue is written first): a read, a lock, an
// update, a count, a raw query. Without the guard each of them would miss
// the row.
func TestCreateTransactionAtCommit_StatementsInTheTransactionSeeIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		cust := mustCustomers(t, db, tn, "pc-sees")[0]
		checks := map[string]func(tx *store.Tx, x store.Transaction) error{
			"get": func(tx *store.Tx, x store.Transaction) error {
				_, err := tx.GetTransaction(ctx, tn, x.ID)
				return err
			},
			"get for update": func(tx *store.Tx, x store.Transaction) error {
				_, err := tx.GetTransactionForUpdate(ctx, tn, x.ID)
				return err
			},
			"update": func(tx *store.Tx, x store.Transaction) error {
				x.Status = "FAILED"
				return tx.UpdateTransaction(ctx, x)
			},
			"list": func(tx *store.Tx, x store.Transaction) error {
				rows, total, err := tx.ListTransactions(ctx, tn, store.TransactionFilter{CustomerID: cust}, "", 10)
				listed := slices.ContainsFunc(rows, func(r store.Transaction) bool { return r.ID == x.ID })
				if err == nil && (!listed || total != len(rows)) {
					err = fmt.Errorf("listed %d of %d, not the new row", len(rows), total)
				}
				return err
			},
			"raw count": func(tx *store.Tx, x store.Transaction) error {
				var n int
				err := tx.QueryRowForTest(ctx, "SELECT COUNT(*) FROM transactions WHERE id = '"+x.ID+"'", &n)
				if err == nil && n != 1 {
					err = store.ErrNotFound
				}
				return err
			},
		}
		for name, check := range checks {
			x := txnRow(tn, cust, "OUTGOING", "PENDING", time.Now())
			x.PlatformCustomerID = "pc-sees"
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.CreateTransactionAtCommit(ctx, x); err != nil {
					return err
				}
				return check(tx, x)
			})
			if err != nil {
				t.Fatalf("%s: %v (the queued row was not written first)", name, err)
			}
			got, err := db.Read().GetTransaction(ctx, tn, x.ID)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if name == "update" && got.Status != "FAILED" {
				t.Fatalf("update: status %s", got.Status)
			}
		}
		checkCounters(t, db)
	})
}

// A row the table would refuse is inserted at once, so the refusal is its
// caller's, when it asks, as with CreateTransaction.
func TestCreateTransactionAtCommit_RefusedRowFailsAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		for name, x := range map[string]store.Transaction{
			"negative fees": func() store.Transaction {
				x := txnRow(tn, "", "OUTGOING", "PENDING", time.Now())
				x.Fees = -1
				return x
			}(),
			"unknown type": txnRow(tn, "", "SIDEWAYS", "PENDING", time.Now()),
		} {
			sawErr := false
			_ = db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.CreateTransactionAtCommit(ctx, x)
				sawErr = err != nil
				return err
			})
			if !sawErr {
				t.Fatalf("%s: accepted at once; the refusal would have come from the commit", name)
			}
		}
	})
}

var errInsufficient = errors.New("insufficient funds")

// Several transfers in one batch, each queueing its transactions rows: the
// one refused after queueing (insufficient funds) writes none, the others'
// rows are all written, once, and counted. A later fn that reads an earlier
// fn's queued row sees it, and when that fn is then refused (rolled back to
// its savepoint, which undid the early write) the earlier row still commits.
func TestInBatchTx_QueuedTransactionsOfABatch(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 1}, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		customers := mustCustomers(t, db, tn, "pa", "pb")
		pcids := map[string]string{customers[0]: "pa", customers[1]: "pb"}
		transfer := func(refuse bool) (func(*store.Tx) error, []store.Transaction) {
			out := txnRow(tn, customers[0], "OUTGOING", "COMPLETED", time.Now())
			in := txnRow(tn, customers[1], "INCOMING", "COMPLETED", time.Now())
			xs := []store.Transaction{out, in}
			return func(tx *store.Tx) error {
				for _, x := range xs {
					x.PlatformCustomerID = pcids[x.CustomerID]
					if _, err := tx.CreateTransactionAtCommit(ctx, x); err != nil {
						return err
					}
				}
				if refuse {
					return errInsufficient
				}
				return nil
			}, xs
		}
		first, firstRows := transfer(false)
		second, secondRows := transfer(false)
		refused, refusedRows := transfer(true)
		last, lastRows := transfer(false)
		// reads first's row, then is refused: first's row must survive.
		reader := func(tx *store.Tx) error {
			if _, err := tx.GetTransaction(ctx, tn, firstRows[0].ID); err != nil {
				return err
			}
			return errInsufficient
		}
		errs := batchInOrder(t, db, first, second, refused, reader, last)
		if errs[0] != nil || errs[1] != nil || errs[4] != nil {
			t.Fatalf("transfers: %v", errs)
		}
		if !errors.Is(errs[2], errInsufficient) || !errors.Is(errs[3], errInsufficient) {
			t.Fatalf("refused: %v, reader: %v (want insufficient funds: the reader saw first's row)", errs[2], errs[3])
		}
		if s := db.BatchStats(); s.Failures != 0 {
			t.Fatalf("batch stats %+v: a batch failed", s)
		}
		for _, xs := range [][]store.Transaction{firstRows, secondRows, lastRows} {
			for _, x := range xs {
				got, err := db.Read().GetTransaction(ctx, tn, x.ID)
				if err != nil {
					t.Fatalf("%s: %v", x.ID, err)
				}
				if got.PlatformCustomerID != pcids[x.CustomerID] {
					t.Fatalf("%s: platformCustomerId %q", x.ID, got.PlatformCustomerID)
				}
			}
		}
		for _, x := range refusedRows {
			if _, err := db.Read().GetTransaction(ctx, tn, x.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("refused transfer's row %s: %v", x.ID, err)
			}
		}
		var n int
		if err := db.Read().QueryRowForTest(ctx, "SELECT COUNT(*) FROM transactions WHERE platform_id = '"+tn.PlatformID+"'", &n); err != nil || n != 6 {
			t.Fatalf("%d rows (%v), want 6", n, err)
		}
		checkCounters(t, db)
	})
}

// Every table whose foreign key refers to a table writes are queued to
// must be listed in store's referencing map (inserting into it needs the
// queued rows): read from the migrations.
func TestQueuedTables_ReferencingCoversTheMigrations(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v", err)
	}
	table := regexp.MustCompile(`(?i)^\s*(?:CREATE TABLE(?: IF NOT EXISTS)?|ALTER TABLE)\s+(\w+)`)
	ref := regexp.MustCompile(`(?i)REFERENCES\s+(\w+)`)
	found := map[string][]string{}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		current := ""
		for _, line := range strings.Split(string(body), "\n") {
			if m := table.FindStringSubmatch(line); m != nil {
				current = strings.ToLower(m[1])
			}
			for _, m := range ref.FindAllStringSubmatch(line, -1) {
				if to := strings.ToLower(m[1]); !slices.Contains(found[to], current) {
					found[to] = append(found[to], current)
				}
			}
		}
	}
	for queued, listed := range store.ReferencingForTest() {
		for _, from := range found[queued] {
			if from != queued && !slices.Contains(listed, from) {
				t.Errorf("%s refers to %s, whose inserts are queued: add it to referencing (outbox.go)", from, queued)
			}
		}
	}
	if len(found["transactions"]) == 0 {
		t.Fatal("found no table referring to transactions: the reading of the migrations is broken")
	}
}
