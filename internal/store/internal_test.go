package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestRebind(t *testing.T) {
	q := Q{engine: Postgres}
	if got := q.rebind("a = ? AND b = ? LIMIT ?"); got != "a = $1 AND b = $2 LIMIT $3" {
		t.Fatal(got)
	}
	if got := (Q{engine: SQLite}).rebind("a = ?"); got != "a = ?" {
		t.Fatal(got)
	}
}

func TestRedactURL(t *testing.T) {
	if got := redactURL("postgres://u:secret@h/db"); got != "postgres://u:***@h/db" {
		t.Fatal(got)
	}
}

func TestStatements(t *testing.T) {
	got := statements("-- c\nCREATE TABLE a (x INT);\n\nCREATE INDEX i ON a (x);\n")
	if len(got) != 2 || got[0] != "CREATE TABLE a (x INT);" {
		t.Fatalf("%q", got)
	}
}

// InTx's pause between retries of a serialization failure ends when the
// context is cancelled: the caller gets the context's error at once, not
// after the backoff.
func TestInTxRetryBackoffHonoursContext(t *testing.T) {
	db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer func(d time.Duration) { retryBackoff = d }(retryBackoff)
	retryBackoff = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attempts := 0
	start := time.Now()
	err = db.InTx(ctx, func(*Tx) error {
		attempts++
		time.AfterFunc(20*time.Millisecond, cancel)
		return &pgconn.PgError{Code: "40001"} // a serialization failure: retryable
	})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Fatalf("InTx returned after %v; want promptly after the cancel", elapsed)
	}
	if !errors.Is(err, context.Canceled) || attempts != 1 {
		t.Fatalf("err %v after %d attempts; want context.Canceled after 1", err, attempts)
	}
}

// Queued inserts of one shape become one multi-row statement; others stay
// as they are, in place.
func TestMergeInserts(t *testing.T) {
	a := statement{sql: "INSERT INTO quotes (id, n) VALUES (?, ?)", args: []any{"q1", 1}}
	b := statement{sql: "INSERT INTO other (id) VALUES (?) ON CONFLICT DO NOTHING", args: []any{"o"}}
	c := statement{sql: "INSERT INTO quotes (id, n) VALUES (?, ?)", args: []any{"q2", 2}}
	got := Q{engine: SQLite}.mergeInserts([]statement{a, b, c})
	if len(got) != 2 || got[0].sql != "INSERT INTO quotes (id, n) VALUES (?, ?), (?, ?)" ||
		len(got[0].args) != 4 || got[0].args[2] != "q2" || got[1].sql != b.sql {
		t.Fatalf("%+v", got)
	}
	if a.sql != "INSERT INTO quotes (id, n) VALUES (?, ?)" || len(a.args) != 2 {
		t.Fatalf("the input changed: %+v", a)
	}

	// On PostgreSQL, with the columns' types known, as arrays: one text for
	// any number of rows (unnest.go).
	pg := Q{engine: Postgres, cols: columnTypes{"quotes": {"id": "text", "n": "bigint"}}}
	got = pg.mergeInserts([]statement{a, b, c})
	if len(got) != 2 || got[0].sql != "INSERT INTO quotes (id, n) SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS bigint[]))" ||
		len(got[0].args) != 2 || got[1].sql != b.sql {
		t.Fatalf("%+v", got)
	}
	ids, ns := got[0].args[0].(textColumn), got[0].args[1].(int8Column)
	if len(ids) != 2 || *ids[1] != "q2" || len(ns) != 2 || *ns[0] != 1 {
		t.Fatalf("%#v", got[0].args)
	}
	// A type it does not carry in arrays: VALUES, as on SQLite.
	pg.cols["quotes"]["n"] = "numeric"
	if got = pg.mergeInserts([]statement{a, c}); got[0].sql != "INSERT INTO quotes (id, n) VALUES (?, ?), (?, ?)" {
		t.Fatalf("%+v", got)
	}
}
