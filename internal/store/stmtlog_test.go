package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The statement log records what one connection sent between BEGIN and
// COMMIT, prepared statements included, with the arguments' types.
func TestStatementLogRecordsTransactions(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l := &stmtLog{f: f, w: bufio.NewWriter(f)}
	plain, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(logConnector{Connector: dsnConnector{dsn: "file:" + filepath.Join(dir, "x.db"), d: plain.Driver()}, log: l})
	plain.Close()
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, b BLOB, z TEXT)"); err != nil {
		t.Fatal(err)
	}
	st, err := db.PrepareContext(ctx, "INSERT INTO t VALUES (?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, "Quote:1", int64(42), []byte("ab"), nil); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT n FROM t WHERE id = ?", "Quote:1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("read back %d %v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	var ops []LoggedStatement
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var s LoggedStatement
		if err := json.Unmarshal(line, &s); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		ops = append(ops, s)
	}
	want := []string{"exec", "begin", "exec", "query", "commit"}
	if len(ops) != len(want) {
		t.Fatalf("logged %+v, want ops %v", ops, want)
	}
	for i, op := range want {
		if ops[i].Op != op || ops[i].Conn != ops[0].Conn {
			t.Fatalf("entry %d: %+v, want %s on one connection", i, ops[i], op)
		}
	}
	ins := ops[2]
	if ins.SQL != "INSERT INTO t VALUES (?, ?, ?, ?)" || len(ins.Args) != 4 ||
		ins.Args[0] != (LoggedArg{Type: "string", Value: "Quote:1"}) || ins.Args[1].Type != "int64" ||
		ins.Args[2] != (LoggedArg{Type: "[]byte", Value: "ab"}) || ins.Args[3].Type != "nil" {
		t.Fatalf("insert logged as %+v", ins)
	}
}

// Without the environment variable, openSQL is sql.Open: no wrapper.
func TestStatementLogOffByDefault(t *testing.T) {
	if os.Getenv(StatementLogEnv) != "" {
		t.Skip(StatementLogEnv + " is set")
	}
	db, err := openSQL("sqlite", "file:"+filepath.Join(t.TempDir(), "y.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error {
		if _, wrapped := dc.(*logConn); wrapped {
			t.Error("the driver connection is wrapped with the log off")
		}
		return nil
	})
}
