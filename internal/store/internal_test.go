package store

import "testing"

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
