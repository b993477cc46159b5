package store

import (
	"database/sql"
	"testing"
)

// Rows become one array a column, NULLs as nil elements; a value that fits
// no array of its column's type refuses the lot (the caller keeps VALUES).
func TestColumnArrays(t *testing.T) {
	flat := []any{"a", int64(1), true, sql.NullString{}, []byte("b"), 2, nil, sql.NullString{String: "c", Valid: true}}
	got, ok := columnArrays([]string{"text", "bigint", "boolean", "text"}, 2, flat)
	if !ok {
		t.Fatal("refused")
	}
	texts, ints, bools, more := got[0].(textColumn), got[1].(int8Column), got[2].(boolColumn), got[3].(textColumn)
	if *texts[0] != "a" || *texts[1] != "b" || *ints[0] != 1 || *ints[1] != 2 || !*bools[0] || bools[1] != nil ||
		more[0] != nil || *more[1] != "c" {
		t.Fatalf("%#v", got)
	}
	for _, bad := range [][]any{{1.5}, {"x", "y"}} {
		if _, ok := columnArrays([]string{"bigint"}, 1, bad); ok {
			t.Fatalf("%v fitted a bigint column", bad)
		}
	}
	if _, ok := columnArrays([]string{"boolean"}, 1, []any{"true"}); ok {
		t.Fatal("a string fitted a boolean column")
	}
}

// insertRows: arrays on PostgreSQL with every column's type known, VALUES
// otherwise (SQLite, an unknown table or column, a value that does not fit).
func TestInsertRows(t *testing.T) {
	cols := columnTypes{"t": {"a": "text", "b": "integer"}}
	pg := Q{engine: Postgres, cols: cols}
	st := pg.insertRows("t", []string{"a", "b"}, 2, []any{"x", 1, "y", 2}, " ON CONFLICT DO NOTHING")
	if st.sql != "INSERT INTO t (a, b) SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS integer[])) ON CONFLICT DO NOTHING" ||
		len(st.args) != 2 {
		t.Fatalf("%+v", st)
	}
	values := "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"
	for name, q := range map[string]Q{"sqlite": {engine: SQLite, cols: cols}, "no types": {engine: Postgres}} {
		if st := q.insertRows("t", []string{"a", "b"}, 2, []any{"x", 1, "y", 2}, ""); st.sql != values || len(st.args) != 4 {
			t.Fatalf("%s: %+v", name, st)
		}
	}
	if st := pg.insertRows("t", []string{"a", "c"}, 1, []any{"x", 1}, ""); st.sql != "INSERT INTO t (a, c) VALUES (?, ?)" {
		t.Fatalf("unknown column: %+v", st)
	}
	if st := pg.insertRows("t", []string{"a", "b"}, 1, []any{"x", "1"}, ""); st.sql != "INSERT INTO t (a, b) VALUES (?, ?)" {
		t.Fatalf("a string for an integer: %+v", st)
	}
}

func TestPlaceholderInsert(t *testing.T) {
	for query, want := range map[string]bool{
		"INSERT INTO t (a, b) VALUES (?, ?)":                        true,
		"INSERT INTO t (a,\n\tb) VALUES (?, ?)":                     true,
		"INSERT INTO t (a, b) VALUES (?, 'PENDING')":                false,
		"INSERT INTO t (a, b) VALUES (?, ?, ?)":                     false,
		"INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING": false,
	} {
		table, cols, ok := placeholderInsert(query)
		if ok != want || (ok && (table != "t" || len(cols) != 2 || cols[1] != "b")) {
			t.Errorf("%q: %q %q %v", query, table, cols, ok)
		}
	}
}
