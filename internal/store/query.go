package store

import (
	"context"
	"database/sql"
	"errors"
	"github.com/paymentsd/paymentsd/internal/keyring"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Typed errors every engine maps its own failures to.
var (
	ErrNotFound = errors.New("store: not found")
	ErrConflict = errors.New("store: unique constraint violated")
)

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q runs queries written with "?" placeholders on either engine.
type Q struct {
	engine Engine
	x      execer
	now    func() time.Time

	// SQLite: prepared statements of x's pool (stmts.go); in a
	// transaction, tx and the statements bound to it.
	stmts   *stmtCache
	tx      *sql.Tx
	txStmts map[string]*sql.Stmt
	// counts is set inside InTx and InBatchTx (transaction_counts.go).
	counts countDeltas
	// outbox is set inside InTx and InBatchTx (outbox.go).
	outbox *outbox
	// volumeShard, inside a transaction, is the daily-volume shard it adds
	// to, per tenant and day (volumes.go).
	volumeShard map[volumeKey]int
	// settings is the DB's cache of tenant settings; staleSettings, inside
	// a transaction, what it wrote of them (settings.go).
	settings      *settingsCache
	staleSettings map[settingKey]struct{}
	// keys seals and opens secrets at rest (secrets.go); nil: none given.
	keys *keyring.Keyring
	// aheads counts the credential statements' read-aheads (read_ahead.go).
	aheads *readAheadCounts
	// cols, inside a transaction on PostgreSQL, types its multi-row
	// writes' arrays (unnest.go).
	cols columnTypes
}

// Engine reports the engine behind q.
func (q Q) Engine() Engine { return q.engine }

// Now is the store clock.
func (q Q) Now() time.Time { return q.now() }

// exec, query and queryRow write the transaction's queued inserts first
// when the statement may touch their tables (flushFor, outbox.go), and
// forget the batch's cached balance and volume rows before a statement that
// may change them (balance_cache.go, volumes.go).

// noteStatement empties the batch's caches before a statement that may
// change their rows, unless it writes the queue (whose changes they hold).
func (q Q) noteStatement(query string) {
	if q.outbox == nil || q.outbox.flushing {
		return
	}
	q.outbox.balances.noteStatement(query)
	q.outbox.volumes.noteStatement(query)
}

// openSavepoint opens a batch fn's savepoint before the fn's first
// statement (fnSavepoint); joinable says query may carry it in its round
// trip (a savepoint of its own, as the fast volume add opens: no
// arguments, no result to read), and the answer is the query to send and
// whether it carries the savepoint.
func (q Q) openSavepoint(ctx context.Context, query string, joinable bool) (string, bool, error) {
	if q.outbox == nil || q.outbox.savepoint == nil {
		return query, false, nil
	}
	return q.outbox.savepoint.before(ctx, q.x, query, joinable && !q.outbox.queuedFor(query))
}

func (q Q) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query, joined, err := q.openSavepoint(ctx, query, len(args) == 0 && strings.HasPrefix(query, "SAVEPOINT "))
	if err != nil {
		return nil, err
	}
	if joined {
		res, err := q.x.ExecContext(ctx, query)
		err = classify(err)
		q.outbox.savepoint.joinedSent(err)
		return res, err
	}
	if err := q.flushFor(ctx, query); err != nil {
		return nil, err
	}
	q.noteStatement(query)
	query = q.rebind(query)
	if st := q.prepared(ctx, query); st != nil {
		res, err := st.ExecContext(ctx, args...)
		return res, classify(err)
	}
	res, err := q.x.ExecContext(ctx, query, args...)
	return res, classify(err)
}

func (q Q) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if _, _, err := q.openSavepoint(ctx, query, false); err != nil {
		return nil, err
	}
	if err := q.flushFor(ctx, query); err != nil {
		return nil, err
	}
	q.noteStatement(query)
	query = q.rebind(query)
	if st := q.prepared(ctx, query); st != nil {
		rows, err := st.QueryContext(ctx, args...)
		return rows, classify(err)
	}
	rows, err := q.x.QueryContext(ctx, query, args...)
	return rows, classify(err)
}

// queryEach runs query and calls scan for each row it returns. As a batch
// fn's first statement on PostgreSQL it carries the fn's savepoint in its
// round trip (fnSavepoint.withFirst), where query would take one round trip
// of its own after the savepoint's.
func (q Q) queryEach(ctx context.Context, query string, args []any, scan func(rowScanner) error) error {
	if q.outbox != nil && q.outbox.savepoint.pipelinable() && !q.outbox.queuedFor(query) {
		q.noteStatement(query)
		return classify(q.outbox.savepoint.withFirst(ctx, pipelined{sql: q.rebind(query), args: args, scan: scan}))
	}
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, scan)
}

func (q Q) queryRow(ctx context.Context, query string, args ...any) row {
	if _, _, err := q.openSavepoint(ctx, query, false); err != nil {
		return row{err: err}
	}
	if err := q.flushFor(ctx, query); err != nil {
		return row{err: err}
	}
	q.noteStatement(query)
	query = q.rebind(query)
	if st := q.prepared(ctx, query); st != nil {
		return row{Row: st.QueryRowContext(ctx, args...)}
	}
	return row{Row: q.x.QueryRowContext(ctx, query, args...)}
}

// row is queryRow's answer: the row, or the error that kept the query from
// being sent.
type row struct {
	*sql.Row
	err error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.Row.Scan(dest...)
}

func (r row) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Row.Err()
}

// forUpdate is the row-lock suffix; SQLite needs none because it has a single
// writer.
func (q Q) forUpdate() string {
	if q.engine == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// rebind turns "?" into "$1, $2…" for PostgreSQL. Our SQL never holds "?"
// inside literals.
func (q Q) rebind(query string) string {
	if q.engine != Postgres || !strings.Contains(query, "?") {
		return query
	}
	if v, ok := rebound.Load(query); ok {
		return v.(string)
	}
	out := rebindPlaceholders(query)
	// Most queries are constants or built from a bounded set of parts
	// (filters, IN lists chunked to fixed sizes). A long one is mostly a
	// batch's writes as one statement (execAll), which need not recur: when
	// their texts followed the batch's rows, keeping them grew the heap by
	// tens of MiB a minute under load (fresh_sql.go). Rebinding one costs a
	// few µs a batch. The cap guards against a future caller of the first
	// kind that is not.
	if len(query) <= reboundMaxLen && reboundN.Add(1) <= reboundCap {
		rebound.Store(query, out)
	}
	return out
}

// rebound caches rebind's answers: rewriting every statement's text cost
// 3% of the server's CPU under load.
var (
	rebound  sync.Map
	reboundN atomic.Int64
)

const (
	reboundCap    = 10_000
	reboundMaxLen = 4096 // bytes
)

func rebindPlaceholders(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// classify maps engine errors to the typed errors above.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" {
		return errors.Join(ErrConflict, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errors.Join(ErrConflict, err)
		}
	}
	return err
}

// retryable reports PostgreSQL serialization failures and deadlocks.
func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01")
}

// Time is stored as integer microseconds since the Unix epoch in UTC: one
// representation that sorts, compares and round-trips identically on both
// engines.
func toMicros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(*t), Valid: true}
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}
