package store

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The statement log (opt-in, for the same-work baseline of paymentsbench,
// docs/benchmarks.md): with PAYMENTS_STATEMENT_LOG=PATH in the environment,
// Open wraps the database driver so that every statement the store sends —
// BEGIN, COMMIT and ROLLBACK included — is appended to PATH as one JSON
// line: the connection it ran on, the SQL text and its arguments with their
// Go types. Without the variable Open uses the drivers directly: nothing
// here runs. It records what goes through database/sql, and what a batch
// sends in pgx's pipeline on a connection it took from database/sql
// (batch_tx.go).

// StatementLogEnv names the environment variable that turns the log on.
const StatementLogEnv = "PAYMENTS_STATEMENT_LOG"

// LoggedStatement is one line of the statement log.
type LoggedStatement struct {
	Conn int64       `json:"conn"`
	Op   string      `json:"op"` // begin, exec, query, commit, rollback
	SQL  string      `json:"sql,omitempty"`
	Args []LoggedArg `json:"args,omitempty"`
}

// LoggedArg is one argument: its Go type and its value (time.Time as
// RFC 3339, []byte as a string).
type LoggedArg struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type stmtLog struct {
	mu    sync.Mutex
	w     *bufio.Writer
	f     *os.File
	conns atomic.Int64
}

var (
	theStmtLog     *stmtLog
	theStmtLogOnce sync.Once
)

// statementLog opens the log named by the environment once; nil when off.
func statementLog() *stmtLog {
	theStmtLogOnce.Do(func() {
		path := os.Getenv(StatementLogEnv)
		if path == "" {
			return
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "store: statement log %s: %v (not logging)\n", path, err)
			return
		}
		theStmtLog = &stmtLog{f: f, w: bufio.NewWriter(f)}
	})
	return theStmtLog
}

// openSQL is sql.Open, through the statement log when it is on.
func openSQL(driverName, dsn string) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn)
	l := statementLog()
	if err != nil || l == nil {
		return db, err
	}
	var c driver.Connector
	if dc, ok := db.Driver().(driver.DriverContext); ok {
		if c, err = dc.OpenConnector(dsn); err != nil {
			db.Close()
			return nil, err
		}
	} else {
		c = dsnConnector{dsn: dsn, d: db.Driver()}
	}
	db.Close()
	return sql.OpenDB(logConnector{Connector: c, log: l}), nil
}

func (l *stmtLog) write(conn int64, op, query string, args []driver.NamedValue) {
	rec := LoggedStatement{Conn: conn, Op: op, SQL: query}
	for _, a := range args {
		rec.Args = append(rec.Args, loggedArg(a.Value))
	}
	b, err := json.Marshal(rec)
	if err != nil {
		b, _ = json.Marshal(LoggedStatement{Conn: conn, Op: op, SQL: query + " -- args not loggable: " + err.Error()})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(append(b, '\n')) //nolint:errcheck // best effort, flushed below
	l.w.Flush()                //nolint:errcheck
}

func loggedArg(v any) LoggedArg {
	switch x := v.(type) {
	case nil:
		return LoggedArg{Type: "nil"}
	case []byte:
		return LoggedArg{Type: "[]byte", Value: string(x)}
	case time.Time:
		return LoggedArg{Type: "time.Time", Value: x.Format(time.RFC3339Nano)}
	case textColumn: // a batch's columns (pg_arrays.go), logged as the slices they are
		return loggedArg([]*string(x))
	case int8Column:
		return loggedArg([]*int64(x))
	case boolColumn:
		return loggedArg([]*bool(x))
	case driver.Valuer:
		dv, err := x.Value()
		if err == nil {
			return loggedArg(dv)
		}
	}
	if _, err := json.Marshal(v); err != nil {
		return LoggedArg{Type: fmt.Sprintf("%T", v), Value: fmt.Sprint(v)}
	}
	return LoggedArg{Type: fmt.Sprintf("%T", v), Value: v}
}

type dsnConnector struct {
	dsn string
	d   driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

type logConnector struct {
	driver.Connector
	log *stmtLog
}

func (c logConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &logConn{inner: conn, log: c.log, id: c.log.conns.Add(1)}, nil
}

// logConn forwards every optional interface database/sql asks for; where
// the wrapped connection lacks one it answers driver.ErrSkip, which makes
// database/sql take its fallback path as it would have.
type logConn struct {
	inner driver.Conn
	log   *stmtLog
	id    int64
}

func (c *logConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *logConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.inner.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &logStmt{Stmt: st, conn: c, query: query}, nil
}

func (c *logConn) Close() error { return c.inner.Close() }

func (c *logConn) Begin() (driver.Tx, error) { //nolint:staticcheck // driver.Conn requires it
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *logConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var tx driver.Tx
	var err error
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = c.inner.Begin() //nolint:staticcheck
	}
	if err != nil {
		return nil, err
	}
	c.log.write(c.id, "begin", "", nil)
	return logTx{inner: tx, conn: c}, nil
}

func (c *logConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	if err != driver.ErrSkip {
		c.log.write(c.id, "exec", query, args)
	}
	return res, err
}

func (c *logConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != driver.ErrSkip {
		c.log.write(c.id, "query", query, args)
	}
	return rows, err
}

func (c *logConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *logConn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *logConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *logConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// logPipelined records one statement of a batch's pipeline (batch_tx.go),
// BEGIN and COMMIT as database/sql's begin and commit.
func (c *logConn) logPipelined(s pipelined) {
	switch {
	case s.sql == "BEGIN":
		c.log.write(c.id, "begin", "", nil)
	case s.sql == "COMMIT":
		c.log.write(c.id, "commit", "", nil)
	default:
		args := make([]driver.NamedValue, len(s.args))
		for i, a := range s.args {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		op := "exec"
		if s.scan != nil {
			op = "query"
		}
		c.log.write(c.id, op, s.sql, args)
	}
}

type logTx struct {
	inner driver.Tx
	conn  *logConn
}

func (t logTx) Commit() error {
	err := t.inner.Commit()
	t.conn.log.write(t.conn.id, "commit", "", nil)
	return err
}

func (t logTx) Rollback() error {
	err := t.inner.Rollback()
	t.conn.log.write(t.conn.id, "rollback", "", nil)
	return err
}

type logStmt struct {
	driver.Stmt
	conn  *logConn
	query string
}

func (s *logStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.conn.log.write(s.conn.id, "exec", s.query, args)
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return s.Stmt.Exec(namedToValues(args)) //nolint:staticcheck
}

func (s *logStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.conn.log.write(s.conn.id, "query", s.query, args)
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return s.Stmt.Query(namedToValues(args)) //nolint:staticcheck
}

func (s *logStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.conn.CheckNamedValue(nv)
}

func namedToValues(args []driver.NamedValue) []driver.Value {
	out := make([]driver.Value, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
