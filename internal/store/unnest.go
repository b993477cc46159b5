package store

import (
	"context"
	"database/sql"
	"strings"
)

// On PostgreSQL a batch's multi-row writes take their rows as one array a
// column (unnest), not as a VALUES list: a VALUES list's text grows with
// its rows, so the batch's combined statement (execAll) was a different
// text for nearly every batch, and PostgreSQL parsed and planned each
// anew (in a perf profile of a c=64 load, planning 9.7% of its CPU and
// parsing and analysis 6.5%; fresh_sql.go). With arrays a
// statement's text depends only on which tables the batch writes, so it is
// prepared once per connection and its plan kept. PostgreSQL's work per
// row is the same either way (BenchmarkInsertRowsValuesOrUnnest). SQLite,
// in-process, keeps VALUES lists.

// columnTypes is each table's column types (text, bigint, integer,
// boolean), read from PostgreSQL's catalog when the store opens.
type columnTypes map[string]map[string]string

// loadColumnTypes reads the column types of the tables the store's
// unqualified names resolve to (those the search path makes visible).
func loadColumnTypes(ctx context.Context, db *sql.DB) (columnTypes, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.relname, a.attname, format_type(a.atttypid, NULL)
		FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
		WHERE c.relkind IN ('r', 'p') AND pg_table_is_visible(c.oid) AND a.attnum > 0 AND NOT a.attisdropped
			AND c.relnamespace::regnamespace::text NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		return nil, err
	}
	out := columnTypes{}
	err = eachRow(rows, func(r rowScanner) error {
		var table, col, typ string
		if err := r.Scan(&table, &col, &typ); err != nil {
			return err
		}
		if out[table] == nil {
			out[table] = map[string]string{}
		}
		out[table][col] = typ
		return nil
	})
	return out, err
}

// insertRows is "INSERT INTO table (cols) …" of rows rows given row by row
// in flat, then tail (an ON CONFLICT clause, or ""): on PostgreSQL
// "SELECT * FROM unnest(…)" of one typed array a column when every column's
// type is known and every value fits it, else a VALUES list.
func (q Q) insertRows(table string, cols []string, rows int, flat []any, tail string) statement {
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ")"
	if types, ok := q.cols.of(table, cols); ok && q.engine == Postgres {
		if arrays, ok := columnArrays(types, rows, flat); ok {
			return statement{sql: head + " SELECT * FROM " + unnestOf(types) + tail, args: arrays}
		}
	}
	return statement{sql: head + " VALUES " + ledgerRowsOf(rows, len(cols)) + tail, args: flat}
}

// of is the types of table's cols, ok only if all are known.
func (c columnTypes) of(table string, cols []string) ([]string, bool) {
	known := c[table]
	if known == nil {
		return nil, false
	}
	types := make([]string, len(cols))
	for i, col := range cols {
		switch t := known[col]; t {
		case "text", "bigint", "integer", "boolean":
			types[i] = t
		default:
			return nil, false
		}
	}
	return types, true
}

// fromRows is the FROM item of an "UPDATE … FROM … AS v (…)" that reads
// rows rows of len(types) values (flat, row by row): on PostgreSQL an
// unnest of one typed array a column when every value fits, else a VALUES
// list with each value cast to its column's type.
func fromRows(engine Engine, types []string, rows int, flat []any) (string, []any) {
	if engine == Postgres {
		if arrays, ok := columnArrays(types, rows, flat); ok {
			return unnestOf(types), arrays
		}
	}
	return "(VALUES " + castRows(types, rows) + ")", flat
}

// castRows is rows tuples of "(CAST(? AS type), …)" for types.
func castRows(types []string, rows int) string {
	casts := make([]string, len(types))
	for i, t := range types {
		casts[i] = "CAST(? AS " + t + ")"
	}
	tuple := "(" + strings.Join(casts, ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", ")
}

// unnestOf is "unnest(CAST(? AS type[]), …)" for types.
func unnestOf(types []string) string {
	var b strings.Builder
	b.WriteString("unnest(")
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("CAST(? AS " + t + "[])")
	}
	b.WriteString(")")
	return b.String()
}

// columnArrays turns rows rows of len(types) values each (flat, row by row)
// into one array a column: a textColumn, int8Column or boolColumn
// (pg_arrays.go), nil for NULL. It reports false when a value fits no array
// of its column's type.
func columnArrays(types []string, rows int, flat []any) ([]any, bool) {
	width := len(types)
	if width == 0 || len(flat) != rows*width {
		return nil, false
	}
	out := make([]any, width)
	for c, t := range types {
		var ok bool
		switch t {
		case "text":
			var col []*string
			col, ok = column(flat, c, width, rows, textValue)
			out[c] = textColumn(col)
		case "bigint", "integer":
			var col []*int64
			col, ok = column(flat, c, width, rows, intValue)
			out[c] = int8Column(col)
		case "boolean":
			var col []*bool
			col, ok = column(flat, c, width, rows, boolValue)
			out[c] = boolColumn(col)
		}
		if !ok {
			return nil, false
		}
	}
	return out, true
}

// column is column c of the rows as pointers (nil for NULL), each value
// read by value, which reports whether it is NULL and whether it fits.
func column[T any](flat []any, c, width, rows int, value func(any) (v T, null, ok bool)) ([]*T, bool) {
	vals, col := make([]T, rows), make([]*T, rows)
	for r := range rows {
		v, null, ok := value(flat[r*width+c])
		if !ok {
			return nil, false
		}
		if !null {
			vals[r] = v
			col[r] = &vals[r]
		}
	}
	return col, true
}

func textValue(a any) (string, bool, bool) {
	switch v := a.(type) {
	case nil:
		return "", true, true
	case string:
		return v, false, true
	case sql.NullString:
		return v.String, !v.Valid, true
	}
	s, ok := bytesText(a)
	return s, false, ok
}

func intValue(a any) (int64, bool, bool) {
	switch v := a.(type) {
	case nil:
		return 0, true, true
	case int64:
		return v, false, true
	case int:
		return int64(v), false, true
	case int32:
		return int64(v), false, true
	case sql.NullInt64:
		return v.Int64, !v.Valid, true
	}
	return 0, false, false
}

func boolValue(a any) (bool, bool, bool) {
	switch v := a.(type) {
	case nil:
		return false, true, true
	case bool:
		return v, false, true
	case sql.NullBool:
		return v.Bool, !v.Valid, true
	}
	return false, false, false
}

// splitCols is a column list ("a, b,\n\tc") as names.
func splitCols(list string) []string {
	cols := strings.Split(list, ",")
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c)
	}
	return cols
}
