package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
	done     chan batchResult
	attempts int
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

	commits, txns atomic.Int64
}

// BatchStats counts group commits: database transactions committed by
// InBatchTx, and the InBatchTx calls they carried.
type BatchStats struct{ Commits, Transactions int64 }

// BatchStats reports the group commits so far (zero if none ran).
func (db *DB) BatchStats() BatchStats {
	b := db.batcher()
	if b == nil {
		return BatchStats{}
	}
	return BatchStats{Commits: b.commits.Load(), Transactions: b.txns.Load()}
}

// InBatchTx runs fn in a write transaction like InTx, but may share that
// transaction and its commit with other InBatchTx calls made at the same
// time. fn runs inside a savepoint of its own: if it fails, its changes alone
// are rolled back and its error returned; otherwise InBatchTx returns after
// the shared commit. As with InTx, a PostgreSQL serialization failure or
// deadlock runs fn again (a few times), so fn must have no effect outside the
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
	r := &batchReq{fn: fn, done: make(chan batchResult, 1)}
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

// batcher starts the group-commit workers on first use: SQLite has one
// writer, so one; PostgreSQL gets Options.BatchWorkers (none by default).
func (db *DB) batcher() *batcher {
	db.batchOnce.Do(func() {
		workers := 1
		if db.engine == Postgres {
			workers = db.opts.BatchWorkers
		}
		if workers <= 0 {
			return
		}
		b := &batcher{db: db, reqs: make(chan *batchReq), stop: make(chan struct{})}
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
		redo = nil
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
		redo = b.db.runBatch(b, batch)
	}
}

// runBatch runs batch in one transaction and answers every request it
// settles; it returns those to run again (retryable failures).
func (db *DB) runBatch(b *batcher, batch []*batchReq) (redo []*batchReq) {
	ctx := context.Background()
	answer := func(r *batchReq, err error) {
		if retryable(err) && r.attempts < 4 {
			r.attempts++
			redo = append(redo, r)
			return
		}
		r.done <- batchResult{err: err}
	}
	db.writeTxs.Add(1)
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		for _, r := range batch {
			answer(r, fmt.Errorf("store: begin: %w", err))
		}
		return redo
	}
	tx := db.newTx(sqlTx)
	// handed: the webhook handoffs of the fns that succeeded (handoff.go),
	// given over after the commit or back if there is none.
	handed := tx.outbox.handed
	// abort ends the transaction early: every request not yet answered
	// (those that succeeded included: nothing is committed) gets err.
	abort := func(rest []*batchReq, err error) []*batchReq {
		_ = sqlTx.Rollback()
		handed.settle(false)
		for _, r := range rest {
			answer(r, err)
		}
		return redo
	}
	single := len(batch) == 1
	var ok []*batchReq
	// Each fn counts its inserted transactions apart, so a fn rolled back
	// to its savepoint takes its counts with it (transaction_counts.go).
	counts := countDeltas{}
	var events []Event // the same for the outbox (outbox.go)
	var writes []statement
	for i, r := range batch {
		fnHanded := &handoffs{reg: handed.reg}
		tx.counts, tx.outbox = countDeltas{}, &outbox{handed: fnHanded}
		if !single {
			if _, err := sqlTx.ExecContext(ctx, "SAVEPOINT grp"); err != nil {
				return abort(append(ok, batch[i:]...), classify(err))
			}
		}
		res := callFn(r.fn, tx)
		switch {
		case res.panic != nil || res.err != nil:
			fnHanded.settle(false)
			if single {
				_ = sqlTx.Rollback()
				if res.panic != nil {
					r.done <- res
					return redo
				}
				answer(r, res.err)
				return redo
			}
			if _, err := sqlTx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT grp"); err != nil {
				// fn's own outcome stands; the others share the broken
				// transaction.
				if res.panic != nil {
					r.done <- res
				} else {
					answer(r, res.err)
				}
				return abort(append(ok, batch[i+1:]...), classify(err))
			}
			if res.panic != nil {
				r.done <- res
			} else {
				answer(r, res.err)
			}
		default:
			ok = append(ok, r)
			for k, n := range tx.counts {
				counts[k] += n
			}
			events = append(events, tx.outbox.events...)
			writes = append(writes, tx.outbox.writes...)
			handed.keep(fnHanded)
		}
		if !single {
			if _, err := sqlTx.ExecContext(ctx, "RELEASE SAVEPOINT grp"); err != nil {
				return abort(append(ok, batch[i+1:]...), classify(err))
			}
		}
	}
	tx.counts, tx.outbox = counts, &outbox{events: events, writes: writes, handed: handed}
	if err := tx.flushAtCommit(ctx); err != nil {
		return abort(ok, err)
	}
	err = sqlTx.Commit()
	db.forgetChanged(tx.staleSettings)
	handed.settle(err == nil)
	if err != nil {
		err = classify(fmt.Errorf("store: commit: %w", err))
		for _, r := range ok {
			answer(r, err)
		}
		return redo
	}
	b.commits.Add(1)
	b.txns.Add(int64(len(ok)))
	for _, r := range ok {
		r.done <- batchResult{}
	}
	return redo
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
