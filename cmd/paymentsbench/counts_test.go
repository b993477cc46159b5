package main

import (
	"context"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// seed clones transactions and their events in SQL and then rebuilds their
// counters, and the invariants notice counters that disagree with the tables.
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
				out := row("OUTGOING", "Quote:q")
				if _, err := tx.CreateTransaction(ctx, out); err != nil {
					return err
				}
				if err := tx.QueueEvent(store.Event{ID: id.At(id.Event, now), Tenant: tn, Type: "OUTGOING_PAYMENT.COMPLETED",
					ResourceID: out.ID, Envelope: []byte(`{}`), CreatedAt: now}); err != nil {
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
			// The template's event, cloned with its transaction (-events).
			_, total, err = db.Read().ListEvents(ctx, tn, store.EventFilter{}, "", 1)
			if err != nil || total != 5 {
				t.Fatalf("after seeding: events' totalCount %d, %v", total, err)
			}
			if r := chk.EventCountChecks(ctx); !r.Pass {
				t.Fatalf("after seeding: %s", r.Detail)
			}
			checkSeededIDs(t, chk)
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
			if _, err := sqlDB.Exec("UPDATE event_counts SET n = n - 1"); err != nil {
				t.Fatal(err)
			}
			if r := chk.EventCountChecks(ctx); r.Pass {
				t.Fatal("an event counter one too low passes")
			} else {
				t.Log(r.Detail)
			}
		})
	}
}

// checkSeededIDs fails unless every event's id, and every cloned
// transaction's, is stamped with its created_at's millisecond, as the
// server's events are (id.At) and as ids follow creation in a real database
// (the time filters' reads rely on it), and unless every delivery row, every
// event and every quote names a row that exists.
func checkSeededIDs(t *testing.T, chk *dbChecker) {
	t.Helper()
	stamped := func(typ, query string) {
		rows, err := chk.db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var rid string
			var micros int64
			if err := rows.Scan(&rid, &micros); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMicro(micros)
			if rid < id.Floor(typ, at) || rid >= id.Floor(typ, at.Add(time.Millisecond)) {
				t.Fatalf("%s created at %s: its id is not stamped with that millisecond", rid, at)
			}
			n++
		}
		if err := rows.Err(); err != nil || n == 0 {
			t.Fatalf("%s: %d rows checked (%v)", query, n, err)
		}
	}
	stamped(id.Event, "SELECT id, created_at FROM events")
	stamped(id.Transaction, "SELECT id, created_at FROM transactions WHERE id LIKE '%.%'")
	for what, q := range map[string]string{
		"delivery rows without their event": "SELECT COUNT(*) FROM webhook_deliveries d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)",
		"events without their transaction":  "SELECT COUNT(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM transactions x WHERE x.id = e.resource_id)",
		"quotes without their transaction":  "SELECT COUNT(*) FROM quotes q WHERE q.transaction_id <> '' AND NOT EXISTS (SELECT 1 FROM transactions x WHERE x.id = q.transaction_id)",
	} {
		var orphans int
		if err := chk.db.QueryRow(q).Scan(&orphans); err != nil || orphans != 0 {
			t.Fatalf("%d %s (%v)", orphans, what, err)
		}
	}
}
