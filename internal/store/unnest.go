package store

import (
	"context"
	"database/sql"
	"encoding/json"
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
// into one array a column: []*string, []*int64 or []*bool, nil for NULL.
// It reports false when a value fits no array of its column's type.
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
			out[c], ok = textColumn(flat, c, width, rows)
		case "bigint", "integer":
			out[c], ok = intColumn(flat, c, width, rows)
		case "boolean":
			out[c], ok = boolColumn(flat, c, width, rows)
		}
		if !ok {
			return nil, false
		}
	}
	return out, true
}

func textColumn(flat []any, c, width, rows int) ([]*string, bool) {
	vals, col := make([]string, rows), make([]*string, rows)
	for r := range rows {
		switch v := flat[r*width+c].(type) {
		case nil:
			continue
		case string:
			vals[r] = v
		case []byte:
			vals[r] = string(v)
		case json.RawMessage:
			vals[r] = string(v)
		case sql.NullString:
			if !v.Valid {
				continue
			}
			vals[r] = v.String
		default:
			return nil, false
		}
		col[r] = &vals[r]
	}
	return col, true
}

func intColumn(flat []any, c, width, rows int) ([]*int64, bool) {
	vals, col := make([]int64, rows), make([]*int64, rows)
	for r := range rows {
		switch v := flat[r*width+c].(type) {
		case nil:
			continue
		case int64:
			vals[r] = v
		case int:
			vals[r] = int64(v)
		case int32:
			vals[r] = int64(v)
		case sql.NullInt64:
			if !v.Valid {
				continue
			}
			vals[r] = v.Int64
		default:
			return nil, false
		}
		col[r] = &vals[r]
	}
	return col, true
}

func boolColumn(flat []any, c, width, rows int) ([]*bool, bool) {
	vals, col := make([]bool, rows), make([]*bool, rows)
	for r := range rows {
		switch v := flat[r*width+c].(type) {
		case nil:
			continue
		case bool:
			vals[r] = v
		case sql.NullBool:
			if !v.Valid {
				continue
			}
			vals[r] = v.Bool
		default:
			return nil, false
		}
		col[r] = &vals[r]
	}
	return col, true
}

// splitCols is a column list ("a, b,\n\tc") as names.
func splitCols(list string) []string {
	cols := strings.Split(list, ",")
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c)
	}
	return cols
}
