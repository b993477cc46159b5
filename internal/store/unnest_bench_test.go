package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/paymentsd/paymentsd/internal/proccpu"
)

// BenchmarkInsertRowsValuesOrUnnest weighs the two shapes a batch's
// multi-row insert can take on PostgreSQL: VALUES lists, one parameter a
// column a row (what the committer sends), or one array a column unnested
// (INSERT … SELECT FROM unnest, whose statement text does not change with
// the number of rows). The table is shaped like events (a text primary key,
// three secondary indexes, a 900-byte envelope). Besides the client's time
// per statement it reports PostgreSQL's CPU per statement, read from the
// backend's /proc entry (so only where PostgreSQL runs on this machine).
//
//	PAYMENTS_TEST_POSTGRES_URL=… go test -count=3 -run '^$' -bench InsertRowsValuesOrUnnest -benchtime 3000x ./internal/store/
//
// The twenty-fourth session's figures are in docs/benchmarks.md.
func BenchmarkInsertRowsValuesOrUnnest(b *testing.B) {
	url := os.Getenv("PAYMENTS_TEST_POSTGRES_URL")
	if url == "" {
		b.Skip("PAYMENTS_TEST_POSTGRES_URL is not set")
	}
	conn, pid := unnestBenchConn(b, url)
	n := 0 // rows inserted so far: each run of a sub-benchmark continues the ids
	for _, rows := range []int{4, 16, 48} {
		for _, shape := range []string{"values", "unnest", "json"} {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, shape), func(b *testing.B) {
				build := map[string]func(*int, int) (string, []any){"values": valuesInsert, "unnest": unnestInsert,
					"json": jsonInsert}[shape]
				run := func() {
					query, args := build(&n, rows)
					if _, err := conn.ExecContext(context.Background(), query, args...); err != nil {
						b.Fatal(err)
					}
				}
				for range 100 { // the statement prepared and its plan settled
					run()
				}
				before, err := proccpu.Of(pid) // fails where PostgreSQL runs elsewhere
				b.ResetTimer()
				for range b.N {
					run()
				}
				b.StopTimer()
				if after, err2 := proccpu.Of(pid); err == nil && err2 == nil {
					b.ReportMetric(float64((after-before).Microseconds())/float64(b.N), "backend-µs/op")
				}
			})
		}
	}
}

// unnestBenchConn is one connection to a schema of its own, dropped after
// the benchmark, with the benchmark's table, and its backend's process id.
func unnestBenchConn(b *testing.B, url string) (*sql.Conn, int) {
	ctx := context.Background()
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	schema := "bench_unnest_" + strconv.Itoa(os.Getpid())
	var pid int
	err = conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
	for _, q := range []string{`CREATE SCHEMA ` + schema, `SET search_path TO ` + schema,
		`CREATE TABLE ev (id text PRIMARY KEY, platform_id text NOT NULL, env text NOT NULL, type text NOT NULL,
			resource_id text NOT NULL, envelope text NOT NULL, created_at bigint NOT NULL)`,
		`CREATE INDEX ev_by_resource ON ev (platform_id, env, resource_id, id)`,
		`CREATE INDEX ev_by_tenant ON ev (platform_id, env, id)`,
		`CREATE INDEX ev_by_type ON ev (platform_id, env, type, id)`} {
		if err == nil {
			_, err = conn.ExecContext(ctx, q)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = conn.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`) })
	return conn, pid
}

var unnestBenchEnvelope = strings.Repeat("x", 900)

// unnestBenchRow is row n's values, in the table's column order.
func unnestBenchRow(n int) []any {
	return []any{fmt.Sprintf("Event:%09d", n), "Platform:1", "sandbox", "OUTGOING_PAYMENT.COMPLETED",
		fmt.Sprintf("Transaction:%09d", n), unnestBenchEnvelope, int64(n)}
}

const unnestBenchInsert = `INSERT INTO ev (id, platform_id, env, type, resource_id, envelope, created_at) `

// valuesInsert is rows new rows as a VALUES list: a parameter a value.
func valuesInsert(n *int, rows int) (string, []any) {
	tuples := make([]string, rows)
	var args []any
	for r := range tuples {
		*n++
		marks := make([]string, 7)
		for k := range marks {
			marks[k] = "$" + strconv.Itoa(len(args)+k+1)
		}
		tuples[r] = "(" + strings.Join(marks, ", ") + ")"
		args = append(args, unnestBenchRow(*n)...)
	}
	return unnestBenchInsert + `VALUES ` + strings.Join(tuples, ", "), args
}

// unnestInsert is rows new rows as seven arrays, one a column.
func unnestInsert(n *int, rows int) (string, []any) {
	cols := make([][]string, 6)
	created := make([]int64, 0, rows)
	for range rows {
		*n++
		row := unnestBenchRow(*n)
		for k := range cols {
			cols[k] = append(cols[k], row[k].(string))
		}
		created = append(created, row[6].(int64))
	}
	return unnestBenchInsert + `SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])`,
		[]any{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], created}
}

// jsonInsert is rows new rows as one JSON array of objects, typed by the
// table's row type (json_populate_recordset).
func jsonInsert(n *int, rows int) (string, []any) {
	names := []string{"id", "platform_id", "env", "type", "resource_id", "envelope", "created_at"}
	objs := make([]map[string]any, 0, rows)
	for range rows {
		*n++
		row := unnestBenchRow(*n)
		obj := make(map[string]any, len(names))
		for k, name := range names {
			obj[name] = row[k]
		}
		objs = append(objs, obj)
	}
	doc, _ := json.Marshal(objs)
	return unnestBenchInsert + `SELECT id, platform_id, env, type, resource_id, envelope, created_at
		FROM json_populate_recordset(NULL::ev, $1)`, []any{string(doc)}
}
