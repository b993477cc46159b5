package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// SQLite statements are prepared once: outside a transaction at first use;
// inside one (whose connection is the only writer) in the background, the
// call itself running unprepared. Past the cache's bound, and for queries
// that do not prepare, queries still run, unprepared.
func TestStmtCache_SQLite(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = `SELECT COUNT(*) FROM platforms WHERE name <> ?`
	count := func(tx *Tx) int {
		t.Helper()
		var n int
		if err := tx.queryRow(ctx, q, "x").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := db.InTx(ctx, func(tx *Tx) error {
		if count(tx) != 0 || count(tx) != 0 {
			t.Fatal("count")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.writeStmts.get(q, true) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the statement was never prepared in the background")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := db.InTx(ctx, func(tx *Tx) error {
		if tx.prepared(ctx, q) == nil || tx.prepared(ctx, q) != tx.prepared(ctx, q) {
			t.Fatal("a transaction does not reuse its bound statement")
		}
		if err := tx.InsertPlatform(ctx, Platform{ID: "p1", Name: "a", CreatedAt: tx.Now()}); err != nil {
			return err
		}
		if count(tx) != 1 {
			t.Fatal("a prepared statement does not see its transaction's writes")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write().exec(ctx, `SELECT no_such_column FROM platforms`); err == nil {
		t.Fatal("a query that does not prepare must still report its error")
	}
	for i := range maxCachedStmts + 10 {
		var n int
		if err := db.Read().queryRow(ctx, fmt.Sprintf(`SELECT %d FROM platforms LIMIT 1`, i)).Scan(&n); err != nil || n != i {
			t.Fatalf("query %d past the bound: %d, %v", i, n, err)
		}
	}
	if len(db.readStmts.m) > maxCachedStmts {
		t.Fatalf("cache grew to %d", len(db.readStmts.m))
	}
}
