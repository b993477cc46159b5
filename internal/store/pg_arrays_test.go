package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// pgxEncoding is what pgx's own codecs make of v (a column's slice) for the
// array type oid: the encoding the columns' codecs must reproduce.
func pgxEncoding(t testing.TB, oid uint32, v any) []byte {
	t.Helper()
	b, err := pgtype.NewMap().Encode(oid, pgtype.BinaryFormatCode, v, nil)
	if err != nil {
		t.Fatalf("pgx: %v", err)
	}
	return b
}

// ourEncoding is what a type map with the columns' codecs makes of c.
func ourEncoding(oid uint32, c any) ([]byte, error) {
	m := pgtype.NewMap()
	withArrayCodecs(m)
	withArrayCodecs(m) // a second call changes nothing
	if _, ok := m.PlanEncode(oid, pgtype.BinaryFormatCode, c).(columnPlan); !ok {
		return nil, errNotOurs
	}
	return m.Encode(oid, pgtype.BinaryFormatCode, c, nil)
}

var errNotOurs = errors.New("the column was not encoded by its codec")

// sameAsPgx checks that the codecs encode column (what) as pgx encodes
// plain, the slice it is, for the array type oid.
func sameAsPgx(t testing.TB, oid uint32, column, plain any, what string) {
	t.Helper()
	got, err := ourEncoding(oid, column)
	if want := pgxEncoding(t, oid, plain); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s: %x, %v; pgx %x", what, got, err, want)
	}
}

// splitColumn makes a text column of s: its parts split at '|', a part "~"
// NULL (so a fuzzer's input covers empty arrays, NULLs and empty strings).
func splitColumn(s string) textColumn {
	if s == "" {
		return textColumn{}
	}
	var c textColumn
	for _, p := range strings.Split(s, "|") {
		if p == "~" {
			c = append(c, nil)
			continue
		}
		c = append(c, new(p))
	}
	return c
}

// null64 stands for NULL in intColumn's values.
const null64 = math.MinInt64 + 1

func intColumn(vals ...int64) int8Column {
	c := make(int8Column, len(vals))
	for i, v := range vals {
		if v != null64 {
			c[i] = new(v)
		}
	}
	return c
}

// The columns' binary arrays are byte for byte pgx's own, for every array
// type a batch sends: with and without NULLs, empty, one element.
func TestColumnCodecs_AsPgxEncodes(t *testing.T) {
	for _, s := range []string{"", "a", "a|b|c", "~", "a|~|", "|", "é|\x00|~|~"} {
		c := splitColumn(s)
		sameAsPgx(t, pgtype.TextArrayOID, c, []*string(c), fmt.Sprintf("text %q", s))
	}
	for _, vals := range [][]int64{{}, {0}, {1, -1, math.MaxInt64, math.MinInt64}, {null64}, {5, null64, 7}} {
		c := intColumn(vals...)
		sameAsPgx(t, pgtype.Int8ArrayOID, c, []*int64(c), fmt.Sprintf("bigint %v", vals))
	}
	for _, vals := range [][]int64{{}, {0, math.MaxInt32, math.MinInt32}, {null64, -3}} {
		c := intColumn(vals...)
		sameAsPgx(t, pgtype.Int4ArrayOID, c, []*int64(c), fmt.Sprintf("integer %v", vals))
	}
	for _, c := range []boolColumn{{}, {new(true)}, {new(false), nil, new(true)}} {
		sameAsPgx(t, pgtype.BoolArrayOID, c, []*bool(c), fmt.Sprintf("boolean %v", c))
	}
}

// A value outside an integer column's range, or a column sent as an array
// of another type, is an error (as pgx's own encoding would give), never a
// wrong value.
func TestColumnCodecs_Refuse(t *testing.T) {
	for _, v := range []int64{math.MaxInt32 + 1, math.MinInt32 - 1} {
		if _, err := ourEncoding(pgtype.Int4ArrayOID, intColumn(1, v)); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%d into integer[]: %v", v, err)
		}
	}
	if _, err := (textColumn{new("x")}).appendArray(nil, pgtype.Int8OID); err == nil {
		t.Error("a text column encoded as a bigint array")
	}
	if _, err := intColumn(1).appendArray(nil, pgtype.TextOID); err == nil {
		t.Error("an integer column encoded as a text array")
	}
	if _, err := (boolColumn{new(true)}).appendArray(nil, pgtype.TextOID); err == nil {
		t.Error("a boolean column encoded as a text array")
	}
}

// Without the codecs (a connection database/sql holds), pgx encodes a
// column through its ArrayGetter side, to the same bytes.
func TestColumnCodecs_WithoutThemAsBefore(t *testing.T) {
	c := splitColumn("a|~|b")
	got := pgxEncoding(t, pgtype.TextArrayOID, c)
	if want := pgxEncoding(t, pgtype.TextArrayOID, []*string(c)); !bytes.Equal(got, want) {
		t.Fatalf("%x, want %x", got, want)
	}
	n := intColumn(4, null64)
	if got, want := pgxEncoding(t, pgtype.Int4ArrayOID, n), pgxEncoding(t, pgtype.Int4ArrayOID, []*int64(n)); !bytes.Equal(got, want) {
		t.Fatalf("%x, want %x", got, want)
	}
}

func FuzzColumnCodecs(f *testing.F) {
	f.Add("a|~|b", int64(7), true)
	f.Add("", int64(math.MaxInt32)+1, false)
	f.Fuzz(func(t *testing.T, s string, n int64, b bool) {
		c := splitColumn(s)
		sameAsPgx(t, pgtype.TextArrayOID, c, []*string(c), fmt.Sprintf("text %q", s))
		ints := intColumn(n, null64, -n)
		for _, oid := range []uint32{pgtype.Int8ArrayOID, pgtype.Int4ArrayOID} {
			got, err := ourEncoding(oid, ints)
			want, werr := pgtype.NewMap().Encode(oid, pgtype.BinaryFormatCode, []*int64(ints), nil)
			if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%d into %d: %x, %v; pgx %x, %v", n, oid, got, err, want, werr)
			}
		}
		bools := boolColumn{new(b), nil}
		sameAsPgx(t, pgtype.BoolArrayOID, bools, []*bool(bools), fmt.Sprintf("boolean %v", b))
	})
}

// On PostgreSQL the columns arrive as the values they hold, through a
// batch's connection (the codecs) and through database/sql (pgx's own).
func TestColumnCodecs_PostgresRoundTrip(t *testing.T) {
	url := os.Getenv("PAYMENTS_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("PAYMENTS_TEST_POSTGRES_URL is not set")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	const q = `SELECT coalesce(string_agg(coalesce(a, '~') || ':' || coalesce(b::text, '~') || ':' || coalesce(c::text, '~') ||
		':' || coalesce(d::text, '~'), ','), '') FROM unnest(CAST($1 AS text[]), CAST($2 AS bigint[]), CAST($3 AS integer[]),
		CAST($4 AS boolean[])) AS v (a, b, c, d)`
	args := []any{splitColumn("x|~|é"), intColumn(math.MaxInt64, null64, -1), intColumn(null64, math.MinInt32, 3),
		boolColumn{new(true), new(false), nil}}
	const want = "x:9223372036854775807:~:true,~:~:-2147483648:false,é:-1:3:~"
	var plain string
	if err := db.QueryRowContext(ctx, q, args...).Scan(&plain); err != nil || plain != want {
		t.Fatalf("database/sql: %q, %v", plain, err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bt := &batchTx{conn: conn, fresh: &freshTexts{}}
	empty := []any{textColumn{}, int8Column{}, int8Column{}, boolColumn{}}
	// Prepared (the codecs), and as a fresh text: unnamed, its parameters
	// text of unspecified type (fresh_sql.go), which the codecs leave to pgx.
	for _, fresh := range []bool{false, true} {
		var batched, none string
		if _, err := bt.run(ctx, []pipelined{{sql: q, args: args, fresh: fresh,
			scan: func(r rowScanner) error { return r.Scan(&batched) }}}); err != nil || batched != want {
			t.Fatalf("batch connection (fresh %v): %q, %v", fresh, batched, err)
		}
		if _, err := bt.run(ctx, []pipelined{{sql: q, args: empty, fresh: fresh,
			scan: func(r rowScanner) error { return r.Scan(&none) }}}); err != nil || none != "" {
			t.Fatalf("empty columns (fresh %v): %q, %v", fresh, none, err)
		}
	}
}

// BenchmarkColumnEncoding: a 60-row text column (ids), as pgx encodes a
// slice of pointers and as the column's codec does.
func BenchmarkColumnEncoding(b *testing.B) {
	c := make(textColumn, 60)
	for i := range c {
		c[i] = new("01a223e1-4324-7121-b62b-33c3c1333e0f")
	}
	for _, bc := range []struct {
		name string
		m    *pgtype.Map
		v    any
	}{{"pgx", pgtype.NewMap(), []*string(c)}, {"codec", pgtype.NewMap(), c}} {
		if bc.name == "codec" {
			withArrayCodecs(bc.m)
		}
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 8192)
			for b.Loop() {
				if _, err := bc.m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, bc.v, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
