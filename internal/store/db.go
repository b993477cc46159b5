// Package store is the persistence layer. One implementation over
// database/sql serves two engines: SQLite (embedded default, zero setup) and
// PostgreSQL (production, several nodes). Queries are written once with "?"
// placeholders and rebound for PostgreSQL; the few places where the engines
// differ ask the Engine. The contract suite in this package's tests runs
// against both.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/paymentsd/paymentsd/internal/keyring"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Engine names a database engine.
type Engine string

const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DB is an open store. It is safe for concurrent use.
type DB struct {
	engine Engine
	write  *sql.DB // SQLite: one connection, so writers queue in Go, never on SQLITE_BUSY
	read   *sql.DB // SQLite: a pool of read-only connections; PostgreSQL: same pool as write
	// now reads clock: SetClock may swap it while background work reads it.
	now   func() time.Time
	clock atomic.Pointer[func() time.Time]
	opts  Options

	writeStmts, readStmts *stmtCache // SQLite only (stmts.go)

	settings *settingsCache  // settings.go
	aheads   readAheadCounts // read_ahead.go
	fresh    freshTexts      // fresh_sql.go
	cols     columnTypes     // PostgreSQL: unnest.go

	secretsMu     sync.Mutex
	serverSecrets map[string][]byte // secrets.go: opened server secrets, by name

	handoff atomic.Pointer[handoffReg] // handoff.go

	writeTxs atomic.Int64 // write transactions begun (WriteTransactions)

	batchOnce sync.Once
	batch     *batcher // group commit (batch.go); nil until first used, or if disabled
	// beforeBatchCommit, when set (tests), runs just before a batch
	// commits; an error stands for a commit that failed.
	beforeBatchCommit atomic.Pointer[func() error]
}

// Options tune Open.
type Options struct {
	// MaxConns caps PostgreSQL connections and SQLite readers (default 16).
	MaxConns int
	// BatchWorkers is how many group commits (InBatchTx) run at once on
	// PostgreSQL, each on its own connection: 0 is DefaultBatchWorkers, a
	// negative number runs InBatchTx as InTx (paymentsd's -pg-group-commit
	// sets it). SQLite always batches, with one worker: it has one writer.
	BatchWorkers int
	// Keyring seals the secrets the store keeps (server secrets, webhook
	// secrets, the webhook signing key; secrets.go). Without one, reading or
	// writing them fails; everything else works.
	Keyring *keyring.Keyring
}

// sqliteDSN is what every SQLite connection of the store opens with.
// synchronous(FULL): a committed transfer survives power loss, not only a
// process crash.
func sqliteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
}

// SQLiteWriterDSN is the DSN of the store's one SQLite writer (the
// same-work baseline of cmd/paymentsbench opens its loop with it).
// _txlock=immediate takes the write lock at BEGIN, so a transaction never
// fails half way on an upgrade. The writer keeps savepoint journals in
// memory (group commit gives every transfer one; on disk they cost a write
// per page touched) and an 8 MiB page cache (2,048 pages), so a batch's
// pages stay in memory until its commit writes them once (no spill at
// c=64). Not more: every commit walks the whole page cache's hash table
// (pcache1TruncateUnsafe, from pager_end_transaction), which at 64 MiB took
// 5.5% of the server's CPU on the one writer at c=8, and 1.2% at 8 MiB;
// pages read again cost back most of that (a net 1.2% of the batch
// worker's CPU) and the process is 45 MB smaller.
func SQLiteWriterDSN(path string) string {
	return sqliteDSN(path) + "&_txlock=immediate&_pragma=temp_store(MEMORY)&_pragma=cache_size(-8192)"
}

// Open connects to url: "sqlite:PATH" (the directory is created if missing)
// or "postgres://…"/"postgresql://…". It applies pending migrations.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = 16
	}
	db := &DB{opts: opts, settings: newSettingsCache(), serverSecrets: map[string][]byte{}}
	realTime := time.Now
	db.clock.Store(&realTime)
	db.now = func() time.Time { return (*db.clock.Load())() }
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return nil, errors.New("store: sqlite URL needs a path, e.g. sqlite:./data/payments.db")
		}
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create %s: %w", dir, err)
			}
		}
		w, err := openSQL("sqlite", SQLiteWriterDSN(path))
		if err != nil {
			return nil, err
		}
		w.SetMaxOpenConns(1)
		w.SetConnMaxLifetime(0)
		r, err := openSQL("sqlite", sqliteDSN(path)+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, err
		}
		r.SetMaxOpenConns(opts.MaxConns)
		// Keep them all: Go's default of two idle connections made the pool
		// close and reopen SQLite connections under load (a profile showed
		// 14% of the server's CPU in opening them).
		r.SetMaxIdleConns(opts.MaxConns)
		db.engine, db.write, db.read = SQLite, w, r
		db.writeStmts, db.readStmts = newStmtCache(w), newStmtCache(r)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		p, err := openSQL("pgx", url)
		if err != nil {
			return nil, err
		}
		p.SetMaxOpenConns(opts.MaxConns)
		p.SetMaxIdleConns(opts.MaxConns)
		p.SetConnMaxIdleTime(5 * time.Minute)
		db.engine, db.write, db.read = Postgres, p, p
	default:
		return nil, fmt.Errorf("store: unsupported database URL %q (want sqlite:PATH or postgres://…)", redactURL(url))
	}
	if err := db.write.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.analyzeUnmeasuredIndexes(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: statistics of new indexes: %w", err)
	}
	if db.engine == Postgres {
		cols, err := loadColumnTypes(ctx, db.read)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("store: read the column types: %w", err)
		}
		db.cols = cols
	}
	return db, nil
}

// redactURL hides a password in a connection URL so it can be logged.
func redactURL(u string) string {
	at := strings.Index(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	creds := u[scheme+3 : at]
	if user, _, ok := strings.Cut(creds, ":"); ok {
		return u[:scheme+3] + user + ":***" + u[at:]
	}
	return u
}

// Close releases the connections.
func (db *DB) Close() error {
	db.batchOnce.Do(func() {}) // no batcher may start after Close
	if db.batch != nil {
		db.batch.close()
	}
	for _, c := range []*stmtCache{db.writeStmts, db.readStmts} {
		if c != nil {
			c.close()
		}
	}
	err := db.write.Close()
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Engine reports which engine backs the store.
func (db *DB) Engine() Engine { return db.engine }

// SetClock replaces the time source (tests).
func (db *DB) SetClock(now func() time.Time) { db.clock.Store(&now) }

// Now is the store's clock.
func (db *DB) Now() time.Time { return db.now() }

// Ping checks the database answers (readiness).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return err
	}
	return db.read.PingContext(ctx)
}

// Read returns a querier for reads outside a transaction.
func (db *DB) Read() Q {
	return Q{engine: db.engine, x: db.read, now: db.now, stmts: db.readStmts, settings: db.settings, keys: db.opts.Keyring, aheads: &db.aheads}
}

// Tx is a write transaction. Its Q methods run inside it.
type Tx struct {
	Q
	tx *sql.Tx
}

// retryBackoff is the pause before InTx's second attempt; each further
// attempt waits one more step.
var retryBackoff = 5 * time.Millisecond

// InTx runs fn in a write transaction and commits it when fn returns nil.
// On PostgreSQL a serialization failure or deadlock retries fn from the start
// (a few times), so fn must not have effects outside the transaction. A
// context cancelled during the pause between attempts ends InTx at once with
// the context's error.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	const attempts = 5
	var err error
	for i := range attempts {
		err = db.inTxOnce(ctx, fn)
		if err == nil || !retryable(err) || ctx.Err() != nil || i == attempts-1 {
			return err
		}
		pause := time.NewTimer(time.Duration(i+1) * retryBackoff)
		select {
		case <-ctx.Done():
			pause.Stop()
			return ctx.Err()
		case <-pause.C:
		}
	}
	return err
}

// WriteTransactions reports how many write transactions InTx and InBatchTx
// have begun: on SQLite each takes the one writer while it runs.
func (db *DB) WriteTransactions() int64 { return db.writeTxs.Load() }

func (db *DB) inTxOnce(ctx context.Context, fn func(*Tx) error) (err error) {
	db.writeTxs.Add(1)
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	tx := db.newTx(sqlTx, sqlTx)
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			tx.outbox.handed.settle(false)
			panic(p)
		}
	}()
	if err := tx.run(ctx, fn); err != nil {
		_ = sqlTx.Rollback()
		tx.outbox.handed.settle(false)
		return err
	}
	err = sqlTx.Commit()
	db.forgetChanged(tx.staleSettings) // committed or not: forgetting is always safe
	tx.outbox.handed.settle(err == nil)
	if err != nil {
		return classify(fmt.Errorf("store: commit: %w", err))
	}
	return nil
}

// newTx is the Tx of a transaction that runs its statements on x: sqlTx,
// or (a PostgreSQL batch, batch_tx.go) the connection it holds, sqlTx nil.
func (db *DB) newTx(x execer, sqlTx *sql.Tx) *Tx {
	q := Q{engine: db.engine, x: x, now: db.now, counts: countDeltas{}, outbox: &outbox{handed: db.newHandoffs()},
		settings: db.settings, staleSettings: map[settingKey]struct{}{}, keys: db.opts.Keyring,
		volumeShard: map[volumeKey]int{}, cols: db.cols}
	if db.writeStmts != nil {
		q.stmts, q.tx, q.txStmts = db.writeStmts, sqlTx, map[string]*sql.Stmt{}
	}
	return &Tx{Q: q, tx: sqlTx}
}

// Write returns a querier for single-statement writes outside a transaction.
func (db *DB) Write() Q {
	return Q{engine: db.engine, x: db.write, now: db.now, stmts: db.writeStmts, settings: db.settings, keys: db.opts.Keyring, aheads: &db.aheads}
}
