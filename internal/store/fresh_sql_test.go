package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A fresh text is sent unnamed freshRecurs times, then prepared; the counts
// start over at freshTextsCap texts.
func TestFreshTexts_UnnamedUntilTheyRecur(t *testing.T) {
	var f freshTexts
	for i := range freshRecurs {
		if f.recurs("WITH w0 AS (…) SELECT 1") {
			t.Fatalf("sending %d: counted as recurring", i+1)
		}
	}
	if !f.recurs("WITH w0 AS (…) SELECT 1") || !f.recurs("WITH w0 AS (…) SELECT 1") {
		t.Fatal("a text sent freshRecurs times does not recur")
	}
	fresh := []pipelined{{sql: "BEGIN"}, {sql: "WITH w1 AS (…) SELECT 2", fresh: true}}
	if !f.unnamed(fresh) {
		t.Fatal("a new fresh text is not sent unnamed")
	}
	if f.unnamed([]pipelined{{sql: "WITH w1 AS (…) SELECT 2"}}) {
		t.Fatal("a text not marked fresh is sent unnamed")
	}
	for i := range freshTextsCap {
		f.recurs("text " + strconv.Itoa(i))
	}
	if len(f.seen) > freshTextsCap {
		t.Fatalf("%d texts counted, cap %d", len(f.seen), freshTextsCap)
	}
}

// Byte slices go as strings, in a copy; other arguments are left alone.
func TestTextArgs(t *testing.T) {
	in := []any{"a", []byte(`{"x":1}`), json.RawMessage(`[2]`), int64(3), nil}
	out := textArgs(in)
	if out[1] != `{"x":1}` || out[2] != `[2]` || out[3] != int64(3) || out[4] != nil {
		t.Fatalf("%#v", out)
	}
	if _, ok := in[1].([]byte); !ok {
		t.Fatal("the caller's arguments were changed")
	}
	plain := []any{"a", int64(1)}
	if got := textArgs(plain); &got[0] != &plain[0] {
		t.Fatal("arguments without byte slices were copied")
	}
}

// sendUnnamed runs a pipeline of unnamed statements on PostgreSQL: writes
// land as given (a []byte as its text, not bytea's escapes), rows scan,
// a failure names its statement and stops the rest, and the connection
// keeps no prepared statement.
func TestSendUnnamed(t *testing.T) {
	url := os.Getenv("PAYMENTS_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("PAYMENTS_TEST_POSTGRES_URL is not set")
	}
	ctx := context.Background()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE fresh_t (id text PRIMARY KEY, doc text NOT NULL, n bigint NOT NULL, ok boolean NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	send := func(stmts ...pipelined) (failed int, err error) {
		err = conn.Raw(func(dc any) error {
			pc, log := pgxConnOf(dc)
			failed, err = sendUnnamed(ctx, pc, stmts, log)
			return err
		})
		return failed, err
	}
	insert := func(id string) pipelined {
		return pipelined{sql: `INSERT INTO fresh_t (id, doc, n, ok) VALUES ($1, $2, $3, $4)`,
			args: []any{id, []byte(`{"x":1}`), int64(5), true}}
	}
	type row struct {
		id, doc string
		n       int64
		ok      bool
	}
	var got []row
	read := pipelined{sql: `SELECT id, doc, n, ok FROM fresh_t WHERE id = ANY($1) ORDER BY id`, args: []any{[]string{"a", "b"}},
		reset: func() { got = nil },
		scan: func(r rowScanner) error {
			var x row
			err := r.Scan(&x.id, &x.doc, &x.n, &x.ok)
			got = append(got, x)
			return err
		}}
	if failed, err := send(insert("a"), read); err != nil || failed != 2 {
		t.Fatalf("failed %d: %v", failed, err)
	}
	if len(got) != 1 || got[0] != (row{"a", `{"x":1}`, 5, true}) {
		t.Fatalf("read back %+v", got)
	}

	// The duplicate fails; the insert after it does not run (the pipeline's
	// implicit transaction takes the first insert back with it).
	failed, err := send(insert("b"), insert("a"), insert("c"), read)
	var pg *pgconn.PgError
	if failed != 1 || !errors.As(err, &pg) || pg.Code != "23505" {
		t.Fatalf("failed %d: %v", failed, err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM fresh_t WHERE id IN ('b', 'c')`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows of the failed pipeline: %v", n, err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements
		WHERE statement LIKE 'INSERT INTO fresh_t%' OR statement LIKE 'SELECT id, doc, n, ok%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d statements prepared: %v", n, err)
	}
}
