package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. A durable commit costs an fsync (and, on SQLite, a pass of
// the one writer over every page the transaction touched); transfers arriving
// together can share one. InBatchTx queues fn for a batcher that runs
// whatever has queued meanwhile in one database transaction, each fn inside
// its own savepoint, and commits once: no fn waits for a timer, a batch is
// simply what arrived while the previous one ran.

// ErrClosed is returned by InBatchTx after Close.
var ErrClosed = errors.New("store: closed")

// maxBatch bounds one group commit, so a batch's locks (PostgreSQL) and the
// one writer (SQLite) are held for a bounded time.
const maxBatch = 64

type batchReq struct {
	fn       func(*Tx) error
	locks    []declaredLock   // balance rows fn will move (WithLedgerLocks)
	volumes  []declaredVolume // daily-volume adds fn will make (WithDailyVolumeAdd)
	done     chan batchResult
	attempts int
	// alone: its last batch failed to commit; it runs in a batch of its
	// own, so another request's failure cannot fail it again.
	alone bool
}

type batchResult struct {
	err   error
	panic any
}

type batcher struct {
	db   *DB
	reqs chan *batchReq
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once // Close may be called twice

	commits, txns, failures, retries atomic.Int64
	workers                          int
	busy                             atomic.Int64 // nanoseconds the workers spent running batches
}

// BatchStats counts group commits: database transactions committed by
// InBatchTx, the InBatchTx calls they carried, the batches that did not
// commit (a failed statement or commit; their fns ran again), and the fns
// run again (after such a batch, or a deadlock or serialization failure of
// their own). Busy is the time the workers spent running batches, from
// taking a batch to answering it, summed over the Workers: Busy over
// Workers times a wall-clock interval is how saturated the committer was.
type BatchStats struct {
	Commits, Transactions, Failures, Retries int64
	Busy                                     time.Duration
	Workers                                  int
}

// BatchStats reports the group commits so far (zero if none ran).
func (db *DB) BatchStats() BatchStats {
	b := db.batcher()
	if b == nil {
		return BatchStats{}
	}
	return BatchStats{Commits: b.commits.Load(), Transactions: b.txns.Load(), Failures: b.failures.Load(),
		Retries: b.retries.Load(), Busy: time.Duration(b.busy.Load()), Workers: b.workers}
}

// InBatchTx runs fn in a write transaction like InTx, but may share that
// transaction and its commit with other InBatchTx calls made at the same
// time. fn runs inside a savepoint of its own: if it fails, its changes alone
// are rolled back. Either way InBatchTx returns only once the shared
// transaction has committed: a failure may have been caused by another fn's
// changes (money it spent), so if the batch does not commit, fn runs again
// (runBatch). As with InTx, a PostgreSQL serialization failure or deadlock
// runs fn again (a few times), so fn must have no effect outside the
// transaction.
//
// fn's statements share a connection with other callers' fns, so they must
// not be cancelled part way: pass them a context that outlives the request
// (context.WithoutCancel), or a cancelled request could break the others'
// transaction.
func (db *DB) InBatchTx(ctx context.Context, fn func(*Tx) error) error {
	b := db.batcher()
	if b == nil {
		return db.InTx(ctx, fn)
	}
	r := &batchReq{fn: fn, locks: declaredLocks(ctx), volumes: declaredVolumes(ctx), done: make(chan batchResult, 1)}
	select {
	case b.reqs <- r:
	case <-b.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, fn may be running: wait for its outcome whatever ctx says.
	res := <-r.done
	if res.panic != nil {
		panic(res.panic)
	}
	return res.err
}

// DefaultBatchWorkers is how many batches run at once on PostgreSQL when
// Options.BatchWorkers is 0. A batch is two round trips (batch_tx.go), and
// while one worker waits on them the requests gather for its next batch:
// on the two-core benchmark machine one worker made batches of 4.0
// transfers at c=8 and 32 at c=64, where two made 2.2 and 21, and one
// spent 10% less machine CPU per transfer at c=8 (2% fewer transfers/s,
// a lower p99) and gave 5-12% more transfers/s at c=64 (docs/benchmarks.md,
// "Nineteenth session"; the eighth, with a round trip per statement, had
// found two better).
const DefaultBatchWorkers = 1

// batcher starts the group-commit workers on first use: SQLite has one
// writer, so one; PostgreSQL gets Options.BatchWorkers (DefaultBatchWorkers
// when 0, none when negative).
func (db *DB) batcher() *batcher {
	db.batchOnce.Do(func() {
		workers := 1
		if db.engine == Postgres {
			workers = db.opts.BatchWorkers
			if workers == 0 {
				workers = DefaultBatchWorkers
			}
		}
		if workers <= 0 {
			return
		}
		b := &batcher{db: db, reqs: make(chan *batchReq), stop: make(chan struct{}), workers: workers}
		for range workers {
			b.wg.Go(b.run)
		}
		db.batch = b
	})
	return db.batch
}

func (b *batcher) close() {
	b.once.Do(func() { close(b.stop) })
	b.wg.Wait()
}

func (b *batcher) run() {
	var redo []*batchReq
	for {
		batch := redo
		if len(batch) == 0 {
			select {
			case r := <-b.reqs:
				batch = append(batch, r)
			case <-b.stop:
				return
			}
		}
	gather:
		for len(batch) < maxBatch {
			select {
			case r := <-b.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		start := time.Now()
		redo = nil
		var together []*batchReq
		for _, r := range batch {
			if r.alone {
				redo = append(redo, b.db.runBatch(b, []*batchReq{r})...)
			} else {
				together = append(together, r)
			}
		}
		if len(together) > 0 {
			redo = append(redo, b.db.runBatch(b, together)...)
		}
		b.busy.Add(int64(time.Since(start)))
	}
}

// runBatch runs batch in one transaction and answers every request it
// settles; it returns those to run again.
//
// Every answer waits for the batch's outcome: a fn that failed may have
// failed because of an earlier fn's changes in the same transaction (the
// funds it spent), so its refusal stands only if those changes commit. When
// the batch fails to commit, the fns it refused run again, and the fns that
// succeeded run again alone, so that whatever broke the batch fails only
// the fn that caused it. Each fn's own queued writes (outbox) go in at the
// batch's commit; a unique-key error in them fails the batch, and every fn
// runs again alone, so it is only that fn's failure in the end.
func (db *DB) runBatch(b *batcher, batch []*batchReq) (redo []*batchReq) {
	ctx := context.Background()
	// A batch of one needs no savepoint. Only a request running alone
	// after a failed commit writes at once what others queue for the
	// commit (alone): a batch of one that is not alone queues them too, and
	// if its commit fails, it runs again alone.
	single := len(batch) == 1
	alone := single && batch[0].alone
	// again queues r to run again, or answers err once it ran too often.
	again := func(r *batchReq, err error) {
		if r.attempts < maxBatchAttempts {
			b.retries.Add(1)
			r.attempts++
			r.alone = r.alone || !alone
			redo = append(redo, r)
			return
		}
		r.done <- batchResult{err: err}
	}
	answer := func(r *batchReq, err error) {
		if retryable(err) {
			again(r, err)
			return
		}
		r.done <- batchResult{err: err}
	}
	db.writeTxs.Add(1)
	bt, err := db.beginBatch(ctx)
	if err != nil {
		for _, r := range batch {
			answer(r, fmt.Errorf("store: begin: %w", err))
		}
		return redo
	}
	tx := db.newTx(bt.execer(), bt.sqlTx)
	balances, volumes, err := tx.lockDeclared(ctx, bt, batch, alone)
	if err != nil {
		b.failures.Add(1)
		bt.rollback()
		tx.outbox.handed.settle(false)
		for _, r := range batch {
			again(r, err)
		}
		return redo
	}
	run := batchRun{db: db, x: bt.execer(), tx: tx, handed: tx.outbox.handed, counts: countDeltas{}, single: single,
		alone: alone, balances: balances, volumes: volumes}
	if bt.conn != nil {
		run.pipe = bt.run
	}
	// failed ends the batch uncommitted: nothing of it stands, so the
	// refused run again, and so does everyone else (alone, unless the
	// failure is one a retry may clear).
	failed := func(err error) []*batchReq {
		b.failures.Add(1)
		bt.rollback()
		run.handed.settle(false)
		for _, f := range run.refused {
			again(f.r, err)
		}
		for _, r := range run.ok {
			if alone || retryable(err) {
				answer(r, err)
			} else {
				again(r, err)
			}
		}
		return redo
	}
	for i, r := range batch {
		if err := run.one(ctx, r); err != nil {
			// The transaction is broken: the rest have not run.
			for _, rest := range batch[i+1:] {
				again(rest, err)
			}
			return failed(err)
		}
	}
	if len(run.ok) == 0 {
		// Nothing succeeded, so every refusal saw committed data only.
		bt.rollback()
		run.handed.settle(false)
		for _, f := range run.refused {
			answer(f.r, f.err)
		}
		return redo
	}
	// The commit's writes are held (PostgreSQL) and sent with the COMMIT
	// (batchTx.commit).
	tx.counts, tx.outbox = run.counts, &outbox{events: run.events, writes: run.writes.pending, handed: run.handed,
		holdLast: bt.conn != nil}
	if err := tx.flushAtCommit(ctx); err != nil {
		return failed(err)
	}
	if hook := db.beforeBatchCommit.Load(); hook != nil {
		if err := (*hook)(); err != nil {
			return failed(err)
		}
	}
	err = bt.commit(ctx, tx.outbox.held)
	db.forgetChanged(tx.staleSettings)
	if err != nil {
		return failed(ledgerConflict(rowsMissed(err))) // the held writes' error as writeQueued's
	}
	run.handed.settle(true)
	b.commits.Add(1)
	b.txns.Add(int64(len(run.ok)))
	for _, r := range run.ok {
		r.done <- batchResult{}
	}
	for _, f := range run.refused {
		answer(f.r, f.err)
	}
	return redo
}

// maxBatchAttempts bounds how often one request runs again after its batch
// failed (or a serialization failure or deadlock).
const maxBatchAttempts = 4

// batchRun is one group commit's transaction and what its fns left.
type batchRun struct {
	db     *DB
	x      execer // the batch's transaction (batchTx)
	tx     *Tx
	handed *handoffs
	single bool
	alone  bool // the request runs alone after a failed commit: no queued writes
	open   bool // a fn's savepoint is open, not released yet
	// pipe sends statements in one round trip (PostgreSQL's batchTx.run);
	// nil on SQLite.
	pipe func(context.Context, []pipelined) (int, error)
	// balances are the rows lockDeclared locked or read, as the fns leave
	// them (balance_cache.go); nil for a request running alone. volumes are the
	// daily-volume rows the batch locked when it began or added to
	// (volumes.go); nil for a request running alone and on SQLite.
	balances *balanceCache
	volumes  *volumeCache

	ok      []*batchReq
	refused []refusal
	counts  countDeltas
	events  []Event
	writes  batchWrites
}

type refusal struct {
	r   *batchReq
	err error
}

// one runs r's fn in its own savepoint (none when the batch is r alone). A
// panic is answered at once: it re-raises in the caller whatever the
// batch's outcome. An error ends the whole transaction.
//
// The savepoint is opened lazily (fnSavepoint): with the fn's first
// statement, in its round trip when it can, or never if the fn sends none
// (its writes all queued for the commit), and then there is nothing to roll
// back either.
func (b *batchRun) one(ctx context.Context, r *batchReq) error {
	tx := b.tx
	fnHanded := &handoffs{reg: b.handed.reg}
	sp := &fnSavepoint{engine: b.db.engine, pipe: b.pipe}
	if !b.single {
		sp.pending = b.savepointStatements()
	}
	tx.counts, tx.outbox = countDeltas{}, &outbox{handed: fnHanded, earlier: &b.writes, balances: b.balances,
		volumes: b.volumes, shared: !b.alone, savepoint: sp}
	// The fn's queued inserts (new rows nothing reads before the commit)
	// wait for the batch's commit, where each table's go in as one
	// statement (mergeInserts). One that conflicts fails the batch, and
	// every fn runs again alone, so the conflict is only its own caller's
	// answer, as if the insert had run in the fn's savepoint. A statement
	// of the fn that may touch their tables writes them first, the earlier
	// fns' too (flushFor): a rollback to the fn's savepoint undoes those,
	// so they are queued again.
	res := callFn(r.fn, tx)
	sp.pending = nil // the statements after the fn (the commit's) are the batch's
	if sp.err != nil {
		// The savepoint did not open: a rollback to the name could reach an
		// earlier fn's, so the transaction ends here and every fn runs again.
		fnHanded.settle(false)
		b.settleFailed(r, res)
		return sp.err
	}
	if res.panic != nil || res.err != nil {
		fnHanded.settle(false)
		if sp.sent {
			if _, err := b.x.ExecContext(ctx, "ROLLBACK TO SAVEPOINT grp"); err != nil {
				b.settleFailed(r, res)
				return classify(err)
			}
		}
		b.writes.requeue()
		b.balances.clear() // the rollback undid what the fn wrote to them
		b.volumes.clear()
		b.settleFailed(r, res)
	} else {
		b.ok = append(b.ok, r)
		for k, n := range tx.counts {
			b.counts[k] += n
		}
		b.events = append(b.events, tx.outbox.events...)
		b.writes.keep(tx.outbox.writes)
		b.handed.keep(fnHanded)
	}
	// The savepoint is released by the next fn's savepoint statement, or
	// by the commit. A fn that opened none leaves an earlier fn's open.
	b.open = b.open || sp.sent
	return nil
}

// savepointStatements open the savepoint of the next fn, releasing the
// previous fn's when it is still open.
func (b *batchRun) savepointStatements() []string {
	if b.open {
		return []string{"RELEASE SAVEPOINT grp", "SAVEPOINT grp"}
	}
	return []string{"SAVEPOINT grp"}
}

// fnSavepoint is a batch fn's savepoint until the fn sends its first
// statement: pending holds the statements that open it (none for a batch of
// one), sent says they went, err that they failed.
type fnSavepoint struct {
	engine  Engine
	pending []string
	sent    bool
	err     error
	pipe    func(context.Context, []pipelined) (int, error) // batchRun.pipe
}

// pipelinable reports whether the savepoint is pending and can go out in
// one pipeline with the fn's first statement (withFirst).
func (sp *fnSavepoint) pipelinable() bool {
	return sp != nil && len(sp.pending) > 0 && sp.pipe != nil
}

// withFirst sends the pending savepoint statements and first, a statement
// with arguments, in one round trip (a pipeline; PostgreSQL). When a
// savepoint statement fails, whether the savepoint opened is not known and
// the batch ends (sp.err); when first fails, the savepoint is open and the
// fn's failure rolls back to it, as after a statement of its own.
func (sp *fnSavepoint) withFirst(ctx context.Context, first pipelined) error {
	stmts := make([]pipelined, 0, len(sp.pending)+1)
	for _, st := range sp.pending {
		stmts = append(stmts, pipelined{sql: st})
	}
	sp.pending = nil
	failed, err := sp.pipe(ctx, append(stmts, first))
	if failed < len(stmts) {
		sp.err = err
		return err
	}
	sp.sent = true
	return err
}

// before opens the savepoint, if it is pending, before query is sent on x.
// On PostgreSQL a query without arguments that writes no queue first
// (flushFor) takes the savepoint statements in its own round trip (the
// simple protocol takes several statements): before returns it prefixed
// with them, and joined, and the caller reports how that went (joinedSent).
// Otherwise they go first, on their own (one round trip on PostgreSQL;
// SQLite runs in-process and takes them one by one).
func (sp *fnSavepoint) before(ctx context.Context, x execer, query string, joinable bool) (q string, joined bool, err error) {
	if sp == nil || len(sp.pending) == 0 {
		return query, false, nil
	}
	stmts := sp.pending
	sp.pending = nil
	if sp.engine == Postgres {
		if joinable {
			sp.sent = true
			return strings.Join(stmts, "; ") + "; " + query, true, nil
		}
		stmts = []string{strings.Join(stmts, "; ")}
	}
	for _, st := range stmts {
		if _, err := x.ExecContext(ctx, st); err != nil {
			sp.err = classify(err)
			return "", false, sp.err
		}
	}
	sp.sent = true
	return query, false, nil
}

// joinedSent records how a statement that carried the savepoint went: when
// it failed, whether the savepoint opened is not known, so the batch ends
// as if it had not (a rollback to the name could reach an earlier fn's).
func (sp *fnSavepoint) joinedSent(err error) {
	if err != nil {
		sp.err = err
	}
}

// settleFailed answers a panic now and keeps an error for after the
// batch's outcome.
func (b *batchRun) settleFailed(r *batchReq, res batchResult) {
	if res.panic != nil {
		r.done <- res
		return
	}
	b.refused = append(b.refused, refusal{r, res.err})
}

// callFn runs fn, turning a panic into a result the caller's goroutine
// re-raises.
func callFn(fn func(*Tx) error, tx *Tx) (res batchResult) {
	defer func() {
		if p := recover(); p != nil {
			res = batchResult{panic: p}
		}
	}()
	return batchResult{err: fn(tx)}
}
