package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// hotForeignKeys are the keys migration 0061 (PostgreSQL only) drops.
var hotForeignKeys = []string{
	"quotes_platform_id_fkey", "transactions_platform_id_fkey", "transactions_customer_id_fkey",
	"transactions_ledger_transfer_id_fkey", "ledger_postings_transfer_id_fkey", "ledger_postings_account_id_fkey",
}

// A NNNN_name.postgres.sql migration runs on PostgreSQL only; SQLite records
// its version without running it. So after migration 0061 PostgreSQL has
// none of the hot foreign keys, SQLite still refuses a posting whose
// transfer is gone, and on PostgreSQL the books audit names such a posting.
func TestMigrations_PostgresOnlyDropsHotForeignKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var applied int
		if err := db.Read().QueryRowForTest(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = 61", &applied); err != nil || applied != 1 {
			t.Fatalf("migration 61 recorded %d times (%v), want once on every engine", applied, err)
		}
		if db.Engine() == store.Postgres {
			var left int
			names := "'" + strings.Join(hotForeignKeys, "', '") + "'"
			if err := db.Read().QueryRowForTest(ctx, `SELECT COUNT(*) FROM pg_constraint WHERE contype = 'f'
				AND conname IN (`+names+`)`, &left); err != nil || left != 0 {
				t.Fatalf("%d of the hot foreign keys left (%v)", left, err)
			}
		}
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		l := ledger.New(db)
		a, err := l.CreateAccount(ctx, tn, ledger.AccountSpec{Currency: "USD", Kind: ledger.Internal, Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		world, err := l.SystemAccount(ctx, tn, ledger.CodeWorld, "USD")
		if err != nil {
			t.Fatal(err)
		}
		tr, err := l.Transfer(ctx, tn, move(world.ID, a.ID, 100), "fund")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Audit(ctx, tn); err != nil {
			t.Fatalf("books before: %v", err)
		}
		err = db.ExecRaw(ctx, "DELETE FROM ledger_transfers WHERE id = ?", tr.ID)
		if db.Engine() == store.SQLite {
			if err == nil {
				t.Fatal("SQLite deleted a transfer its postings refer to: its foreign key is gone")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		err = l.Audit(ctx, tn)
		if !errors.Is(err, ledger.ErrInvariant) || !strings.Contains(err.Error(), "postings of unknown transfer "+tr.ID) {
			t.Fatalf("audit after the transfer row went: %v", err)
		}
	})
}
