package store

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A PostgreSQL batch sends its writes as one statement (execAll). Its text
// was a VALUES list a table, as long as the batch's rows, so at c=64 nearly
// every batch's text was new; pgx prepared every one (a round trip of its
// own) and kept up to 512 a connection, and the server kept each prepared
// statement's parse tree in the connection's backend: under a 20 s c=64
// load paymentsd's heap grew by tens of MiB and the backends' private
// memory to about 850 MiB in all. The rows now go as arrays (unnest.go), so
// a few texts recur; a text still goes unnamed (PostgreSQL's extended
// protocol allows it) until it has been seen freshRecurs times, so one that
// does not recur (an unusual batch, or a write whose values arrays cannot
// carry) is never prepared or kept. Neither pgx nor the backend keeps an
// unnamed statement.

// freshRecurs is how many times a fresh text is sent unnamed before it is
// prepared like any other.
const freshRecurs = 2

// freshTextsCap bounds the texts counted; when it is reached the counts
// start over.
const freshTextsCap = 4096

// freshTexts counts the fresh texts a node has sent, by a hash of the text
// (a collision only prepares a text sooner).
type freshTexts struct {
	mu   sync.Mutex
	seed maphash.Seed
	seen map[uint64]uint8
}

// recurs counts one sending of sql and reports whether it has been sent
// freshRecurs times before.
func (f *freshTexts) recurs(sql string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil || len(f.seen) >= freshTextsCap {
		f.seed, f.seen = maphash.MakeSeed(), make(map[uint64]uint8)
	}
	h := maphash.String(f.seed, sql)
	n := f.seen[h]
	if n >= freshRecurs {
		return true
	}
	f.seen[h] = n + 1
	return false
}

// unnamed reports whether stmts go as unnamed statements: when one of
// them is a fresh text that has not recurred (each counted once).
func (f *freshTexts) unnamed(stmts []pipelined) bool {
	found := false
	for _, s := range stmts {
		if s.fresh && !f.recurs(s.sql) {
			found = true
		}
	}
	return found
}

// sendUnnamed sends stmts in one round trip, each as PostgreSQL's unnamed
// statement (parsed, planned and run, then dropped), and reads their
// results in order: it answers the index of the first that failed
// (len(stmts) when none did) and its error, as batchTx.run does.
// Parameters go as text of unspecified type, so the server types them from
// the statement, as it did when preparing it; results come back as text,
// which pgx's rows scan like binary ones.
func sendUnnamed(ctx context.Context, pc *pgx.Conn, stmts []pipelined, log func(pipelined)) (int, error) {
	var b pgconn.Batch
	var eqb pgx.ExtendedQueryBuilder
	for i, s := range stmts {
		if err := eqb.Build(pc.TypeMap(), nil, textArgs(s.args)); err != nil {
			return i, fmt.Errorf("store: encode the arguments of an unnamed statement: %w", err)
		}
		b.ExecParams(s.sql, eqb.ParamValues, nil, eqb.ParamFormats, eqb.ResultFormats)
	}
	mrr := pc.PgConn().ExecBatch(ctx, &b)
	failed := len(stmts)
	var first error
	for i, s := range stmts {
		log(s)
		if s.reset != nil {
			s.reset()
		}
		if first != nil {
			continue
		}
		if !mrr.NextResult() { // the error that ended the pipeline, if one did
			failed, first = i, mrr.Close()
			if first == nil {
				first = fmt.Errorf("store: the pipeline ended before statement %d of %d", i+1, len(stmts))
			}
			continue
		}
		if err := readUnnamed(pc, mrr.ResultReader(), s); err != nil {
			failed, first = i, err
		}
	}
	if err := mrr.Close(); err != nil && first == nil {
		failed, first = len(stmts)-1, err
	}
	return failed, first
}

// readUnnamed reads one statement's result from an unnamed pipeline.
func readUnnamed(pc *pgx.Conn, rr *pgconn.ResultReader, s pipelined) error {
	if s.scan == nil {
		_, err := rr.Close()
		return err
	}
	rows := pgx.RowsFromResultReader(pc.TypeMap(), rr)
	defer rows.Close()
	for rows.Next() {
		if err := s.scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// textArgs gives byte slices as strings, and a batch's columns
// (pg_arrays.go) as the plain slices they are, which pgx types by their Go
// type when the parameter's is unspecified. Sent as text of unspecified
// type, pgx would write a []byte in bytea's escaped form, and the server
// would store those escapes in the text column it is bound for; the store
// has no bytea columns, so a []byte argument is always text (a JSON
// document).
func textArgs(args []any) []any {
	out := args
	for i, a := range args {
		v, ok := plainArg(a)
		if !ok {
			continue
		}
		if &out[0] == &args[0] {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	return out
}

// plainArg is a, as textArgs sends it, when that differs.
func plainArg(a any) (any, bool) {
	switch c := a.(type) {
	case textColumn:
		return []*string(c), true
	case int8Column:
		return []*int64(c), true
	case boolColumn:
		return []*bool(c), true
	}
	return bytesText(a)
}

// bytesText is a []byte or json.RawMessage argument as the text it holds
// (textArgs, textValue).
func bytesText(a any) (string, bool) {
	switch v := a.(type) {
	case []byte:
		return string(v), true
	case json.RawMessage:
		return string(v), true
	}
	return "", false
}
