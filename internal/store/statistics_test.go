package store_test

import (
	"path/filepath"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// On SQLite, an index a migration adds to an analyzed database gets
// statistics of its own when the store opens (the planner would take it for
// a very selective one); a database never analyzed is left without any.
func TestOpen_AnalyzesUnmeasuredIndexes(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "stats.db")
	open := func() *store.DB {
		t.Helper()
		db, err := store.Open(ctx, url, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	measured := func(db *store.DB, index string) bool {
		t.Helper()
		return countRows(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_stat1'`) > 0 &&
			countRows(t, db, `SELECT COUNT(*) FROM sqlite_stat1 WHERE idx = '`+index+`'`) > 0
	}
	db := open()
	mustInsert(t, db, txnRow(store.Tenant{PlatformID: mustPlatform(t, db, true).ID, Env: store.EnvSandbox}, "", "INCOMING",
		"COMPLETED", db.Now()))
	if measured(db, "transactions_by_tenant") {
		t.Fatal("a new database has statistics")
	}
	// An operator's ANALYZE, then a migration's new index (dropped and
	// made again here, its statistics lost).
	for _, stmt := range []string{"ANALYZE", "DELETE FROM sqlite_stat1 WHERE idx = 'transactions_by_created'"} {
		if err := db.Write().ExecForTest(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if measured(db, "transactions_by_created") || !measured(db, "transactions_by_tenant") {
		t.Fatal("the index to measure is measured, or the others are not")
	}
	db.Close()
	db = open()
	defer db.Close()
	if !measured(db, "transactions_by_created") {
		t.Fatal("opening the store left an index without statistics beside measured ones")
	}
}

// On SQLite, migrations sort in temporary files, and the writer goes back to
// sorting in memory once they are done.
func TestOpen_SQLiteWriterTempStoreAfterMigrating(t *testing.T) {
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "temp.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode int
	if err := db.Write().QueryRowForTest(ctx, "PRAGMA temp_store", &mode); err != nil || mode != 2 {
		t.Fatalf("the writer's temp_store is %d (%v), want 2 (MEMORY)", mode, err)
	}
}
