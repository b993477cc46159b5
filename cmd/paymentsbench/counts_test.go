package main

import (
	"context"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// seed clones transactions in SQL and then rebuilds their counters, and
// the invariant notices counters that disagree with the table.
func TestSeedKeepsTransactionCounts(t *testing.T) {
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db, dbURL, tn := tinyStore(t, engine)
			// A template: a completed OUTGOING quote transaction and the
			// receiver's INCOMING, both on one ledger transfer.
			l := ledger.New(db)
			a, err := l.CreateAccount(ctx, tn, ledger.AccountSpec{Currency: "USD", Kind: ledger.Internal, Name: "c"})
			if err != nil {
				t.Fatal(err)
			}
			world, err := l.SystemAccount(ctx, tn, ledger.CodeWorld, "USD")
			if err != nil {
				t.Fatal(err)
			}
			tr, err := l.Commit(ctx, tn, []ledger.TransferSpec{{Postings: []ledger.PostingSpec{
				{AccountID: world.ID, Currency: "USD", Amount: -5}, {AccountID: a.ID, Currency: "USD", Amount: 5}}}})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC().Truncate(time.Microsecond)
			row := func(typ, quote string) store.Transaction {
				return store.Transaction{ID: id.New(id.Transaction), Tenant: tn, Type: typ, Status: "COMPLETED",
					Direction: "DEBIT", AccountID: a.ID, Source: []byte(`{}`), Destination: []byte(`{}`), SentAmount: 5,
					SentCurrency: "USD", QuoteID: quote, LedgerTransferID: tr[0].ID, CreatedAt: now, UpdatedAt: now}
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.CreateTransaction(ctx, row("OUTGOING", "Quote:q")); err != nil {
					return err
				}
				_, err := tx.CreateTransaction(ctx, row("INCOMING", ""))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			chk, err := openDBChecker(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer chk.Close()
			sqlDB := chk.db
			if r := chk.TransactionCountChecks(ctx); !r.Pass {
				t.Fatalf("before seeding: %s", r.Detail)
			}

			if err := seedMain(ctx, []string{"-db", dbURL, "-transactions", "10", "-quotes=false"}); err != nil {
				t.Fatal(err)
			}
			_, total, err := db.Read().ListTransactions(ctx, tn, store.TransactionFilter{}, "", 1)
			if err != nil || total != 10 {
				t.Fatalf("after seeding: totalCount %d, %v", total, err)
			}
			if r := chk.TransactionCountChecks(ctx); !r.Pass {
				t.Fatalf("after seeding: %s", r.Detail)
			}
			for _, r := range chk.LedgerChecks(ctx) {
				if !r.Pass {
					t.Fatalf("after seeding: %s: %s", r.Name, r.Detail)
				}
			}

			if _, err := sqlDB.Exec("UPDATE transaction_counts SET n = n + 1 WHERE scope = 'platform'"); err != nil {
				t.Fatal(err)
			}
			if r := chk.TransactionCountChecks(ctx); r.Pass {
				t.Fatal("a counter one too high passes")
			} else {
				t.Log(r.Detail)
			}
		})
	}
}
