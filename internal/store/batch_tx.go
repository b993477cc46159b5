package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// batchTx is the transaction a group commit runs in (runBatch). On SQLite it
// is database/sql's. On PostgreSQL it is a connection the batch holds and on
// which it sends BEGIN and COMMIT itself, each in the round trip of a
// statement: BEGIN with the batch's lock statement (lockDeclared), COMMIT
// after the batch's last write (flushAtCommit's last group). The two of a
// pair go out together in pgx's pipeline and are answered together, so a
// batch costs two round trips fewer than with database/sql's BEGIN and
// COMMIT of their own. In a pipeline PostgreSQL skips everything after a
// failed statement up to its end, so a failed lock statement runs in a
// transaction that is then rolled back, and a failed last write never
// reaches its COMMIT: the statement's checks (expect_rows, outbox.go) fail
// inside SQL for that reason.
type batchTx struct {
	sqlTx *sql.Tx     // SQLite
	conn  *sql.Conn   // PostgreSQL
	open  bool        // PostgreSQL: BEGIN was sent, and neither COMMIT nor ROLLBACK since
	fresh *freshTexts // fresh_sql.go
}

// pipelined is one statement of a pipeline, its placeholders already
// PostgreSQL's; scan, when set, reads each row it returns, and reset, when
// set, runs before its rows are read.
type pipelined struct {
	sql   string
	args  []any
	scan  func(rowScanner) error
	reset func()
	fresh bool // statement.fresh
}

// rowScanner is a result row of database/sql or of pgx.
type rowScanner interface{ Scan(dest ...any) error }

// beginBatch opens a batch's transaction: SQLite's begins at once, a
// PostgreSQL batch takes a connection and begins with its first statement
// (begin).
func (db *DB) beginBatch(ctx context.Context) (*batchTx, error) {
	if db.engine != Postgres {
		tx, err := db.write.BeginTx(ctx, nil)
		return &batchTx{sqlTx: tx}, err
	}
	conn, err := db.write.Conn(ctx)
	return &batchTx{conn: conn, fresh: &db.fresh}, err
}

// execer is what the batch's statements run on.
func (bt *batchTx) execer() execer {
	if bt.sqlTx != nil {
		return bt.sqlTx
	}
	return bt.conn
}

// begin sends BEGIN on PostgreSQL, with first (if any) in the same round
// trip; on SQLite the transaction has begun, and first runs on it.
func (bt *batchTx) begin(ctx context.Context, first *pipelined) error {
	stmts := []pipelined{{sql: "BEGIN"}}
	if bt.sqlTx != nil {
		if first == nil {
			return nil
		}
		stmts = nil
	}
	if first != nil {
		stmts = append(stmts, *first)
	}
	bt.open = bt.conn != nil
	_, err := bt.run(ctx, stmts)
	return err
}

// commit sends last (if any) and COMMIT, on PostgreSQL in one round trip.
// An error of last is its own (classified); the commit's is wrapped.
func (bt *batchTx) commit(ctx context.Context, last []pipelined) error {
	stmts := slices.Clip(last)
	if bt.sqlTx != nil {
		if _, err := bt.run(ctx, stmts); err != nil {
			return err
		}
		return commitErr(bt.sqlTx.Commit())
	}
	failed, err := bt.run(ctx, append(stmts, pipelined{sql: "COMMIT"}))
	if err != nil && failed == len(stmts) {
		return commitErr(err)
	}
	if err == nil {
		bt.open = false
		bt.close(false)
	}
	return err
}

func commitErr(err error) error {
	if err == nil {
		return nil
	}
	return classify(fmt.Errorf("store: commit: %w", err))
}

// rollback ends the transaction uncommitted and gives the connection back:
// a PostgreSQL connection whose ROLLBACK failed is closed, not reused.
func (bt *batchTx) rollback() {
	if bt.sqlTx != nil {
		_ = bt.sqlTx.Rollback()
		return
	}
	if bt.conn == nil {
		return
	}
	bad := false
	if bt.open {
		_, err := bt.conn.ExecContext(context.Background(), "ROLLBACK")
		bad = err != nil
		bt.open = false
	}
	bt.close(bad)
}

// close gives the connection back to the pool, or closes it when bad.
func (bt *batchTx) close(bad bool) {
	if bad {
		_ = bt.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = bt.conn.Close()
	bt.conn = nil
}

// run sends stmts: on SQLite one by one, on PostgreSQL as one pipeline. It
// answers the index of the statement that failed (len(stmts) when none did)
// and its error.
func (bt *batchTx) run(ctx context.Context, stmts []pipelined) (int, error) {
	if bt.sqlTx != nil {
		for i, s := range stmts {
			if err := runOne(ctx, bt.sqlTx, s); err != nil {
				return i, err
			}
		}
		return len(stmts), nil
	}
	failed := len(stmts)
	err := bt.conn.Raw(func(dc any) error {
		pc, log := pgxConnOf(dc)
		if pc == nil {
			return fmt.Errorf("store: the PostgreSQL connection is a %T, not pgx's", dc)
		}
		withArrayCodecs(pc.TypeMap())
		if bt.fresh.unnamed(stmts) {
			var err error
			failed, err = sendUnnamed(ctx, pc, stmts, log)
			return err
		}
		var b pgx.Batch
		for _, s := range stmts {
			b.Queue(s.sql, s.args...)
		}
		res := pc.SendBatch(ctx, &b)
		var first error
		for i, s := range stmts {
			log(s)
			if err := readPipelined(res, s); err != nil && first == nil {
				failed, first = i, err
			}
		}
		if err := res.Close(); err != nil && first == nil {
			failed, first = len(stmts)-1, err
		}
		return first
	})
	return failed, classify(err)
}

// runOne runs s on x (SQLite's transaction).
func runOne(ctx context.Context, x execer, s pipelined) error {
	if s.reset != nil {
		s.reset()
	}
	if s.scan == nil {
		_, err := x.ExecContext(ctx, s.sql, s.args...)
		return classify(err)
	}
	rows, err := x.QueryContext(ctx, s.sql, s.args...)
	if err != nil {
		return classify(err)
	}
	return eachRow(rows, s.scan)
}

// readPipelined reads s's result from a pipeline.
func readPipelined(res pgx.BatchResults, s pipelined) error {
	if s.reset != nil {
		s.reset()
	}
	if s.scan == nil {
		_, err := res.Exec()
		return err
	}
	rows, err := res.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := s.scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachRow calls scan for each of rows, then closes them.
func eachRow(rows *sql.Rows, scan func(rowScanner) error) error {
	return ledgerEachRow(rows, func(r *sql.Rows) error { return scan(r) })
}

// pgxConnOf is the pgx connection under a database/sql driver connection
// (through the statement log's wrapper, whose log then records what the
// pipeline sends: BEGIN and COMMIT as the operations database/sql's would
// be); nil when it is not pgx's.
func pgxConnOf(dc any) (*pgx.Conn, func(pipelined)) {
	noLog := func(pipelined) {}
	switch c := dc.(type) {
	case *stdlib.Conn:
		return c.Conn(), noLog
	case *logConn:
		inner, ok := c.inner.(*stdlib.Conn)
		if !ok {
			return nil, noLog
		}
		return inner.Conn(), c.logPipelined
	}
	return nil, noLog
}
