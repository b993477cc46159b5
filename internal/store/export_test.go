package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
)

// Hooks for the external tests of this package (some damage or rewind the
// schema).

// Counted reports whether ListTransactions reads f's total from
// transaction_counts (once it has resolved PlatformCustomerID).
func Counted(f TransactionFilter) bool {
	if f.PlatformCustomerID != "" {
		f.PlatformCustomerID, f.CustomerID = "", cmp.Or(f.CustomerID, "Customer:resolved")
	}
	_, ok := countedScope(f)
	return ok
}

// ExecRaw runs one statement outside any transaction.
func (db *DB) ExecRaw(ctx context.Context, query string, args ...any) error {
	_, err := db.Write().exec(ctx, query, args...)
	return err
}

// Migrate applies pending migrations again.
func (db *DB) Migrate(ctx context.Context) error { return db.migrate(ctx) }

// TransactionCounts returns each counter (scope, type and status; summed
// over shards, none that sums to 0) and the true count of each, computed in
// Go from the transactions table, keyed "platform/env/scope/type/status".
func (db *DB) TransactionCounts(ctx context.Context) (counters, truth map[string]int64, err error) {
	counters, truth = map[string]int64{}, map[string]int64{}
	q := db.Read()
	rows, err := q.query(ctx, "SELECT platform_id, env, scope, transaction_type, status, n FROM transaction_counts")
	if err != nil {
		return nil, nil, err
	}
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var p, e, s, k, st string
		var n int64
		if err := r.Scan(&p, &e, &s, &k, &st, &n); err != nil {
			return err
		}
		counters[p+"/"+e+"/"+s+"/"+k+"/"+st] += n
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	maps.DeleteFunc(counters, func(_ string, n int64) bool { return n == 0 })
	rows, err = q.query(ctx, "SELECT platform_id, env, customer_id, transaction_type, status FROM transactions")
	if err != nil {
		return nil, nil, err
	}
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var p, e, k, st string
		var c sql.NullString
		if err := r.Scan(&p, &e, &c, &k, &st); err != nil {
			return err
		}
		kind := "/" + k + "/" + st
		truth[p+"/"+e+"/all"+kind]++
		if c.Valid {
			truth[p+"/"+e+"/customer:"+c.String+kind]++
		} else {
			truth[p+"/"+e+"/platform"+kind]++
		}
		return nil
	})
	return counters, truth, err
}

type LedgerBucketKey struct {
	AccountID         string
	Span, BucketStart int64
}

// LedgerBucketsForTest reads every bucket's amount.
func (db *DB) LedgerBucketsForTest(ctx context.Context) (map[LedgerBucketKey]int64, error) {
	rows, err := db.Read().query(ctx, "SELECT account_id, span, bucket_start, amount FROM ledger_posting_buckets")
	if err != nil {
		return nil, err
	}
	out := map[LedgerBucketKey]int64{}
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var acct string
		var span, start, amount int64
		err := r.Scan(&acct, &span, &start, &amount)
		out[LedgerBucketKey{acct, span, start}] = amount
		return err
	})
	return out, err
}

// QueryRowForTest scans one row of a raw query.
func (q Q) QueryRowForTest(ctx context.Context, query string, dest ...any) error {
	return classify(q.queryRow(ctx, query).Scan(dest...))
}

// QueryEachForTest returns the one text column of each row query selects,
// read as the webhook finish reads its rows (queryEach).
func (q Q) QueryEachForTest(ctx context.Context, query string, args ...any) ([]string, error) {
	var out []string
	err := q.queryEach(ctx, query, args, func(r rowScanner) error {
		var s string
		err := r.Scan(&s)
		out = append(out, s)
		return err
	})
	return out, err
}

// QueryString returns the one text value query selects.
func (db *DB) QueryString(ctx context.Context, query string, args ...any) (string, error) {
	var s string
	err := db.Read().queryRow(ctx, query, args...).Scan(&s)
	return s, classify(err)
}

// DropKeyring makes db a store opened without a key ring.
func (db *DB) DropKeyring() { db.opts.Keyring = nil }

// ExecForTest runs one raw statement through q (inside a transaction when q
// is a Tx's).
func (q Q) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := q.exec(ctx, query, args...)
	return err
}

// FailBatchCommits runs fail just before every batch commit; an error it
// returns fails that commit (a crash between a batch's decisions and its
// commit). nil ends it.
func (db *DB) FailBatchCommits(fail func() error) {
	if fail == nil {
		db.beforeBatchCommit.Store(nil)
		return
	}
	db.beforeBatchCommit.Store(&fail)
}

// PipelineForTest runs a transaction as a batch does (batch_tx.go): begin
// sends BEGIN with first, commit sends last with COMMIT ("" is none); a
// failure rolls back. It answers the begin's and the commit's errors, the
// commit's read as runBatch reads it.
func (db *DB) PipelineForTest(ctx context.Context, first, last string) (beginErr, commitErr error) {
	bt, err := db.beginBatch(ctx)
	if err != nil {
		return err, nil
	}
	stmt := func(s string) *pipelined {
		if s == "" {
			return nil
		}
		return &pipelined{sql: db.Write().rebind(s)}
	}
	if err := bt.begin(ctx, stmt(first)); err != nil {
		bt.rollback()
		return err, nil
	}
	var held []pipelined
	if p := stmt(last); p != nil {
		held = append(held, *p)
	}
	if err := bt.commit(ctx, held); err != nil {
		bt.rollback()
		return nil, rowsMissed(err)
	}
	return nil, nil
}

// ExplainFinishForTest is PostgreSQL's plan (EXPLAIN, FORMAT JSON; not
// run) of the statement that finishes fs.
func (db *DB) ExplainFinishForTest(ctx context.Context, fs []Finish) (string, error) {
	q := db.Write()
	now := q.Now()
	var plan string
	args := append(finishArrays(fs, now), toMicros(now))
	err := q.x.QueryRowContext(ctx, q.rebind("EXPLAIN (FORMAT JSON) "+finishQueryPG), args...).Scan(&plan)
	return plan, err
}

// ErrQueuedDeltaMissedForTest is errQueuedDeltaMissed.
var ErrQueuedDeltaMissedForTest = errQueuedDeltaMissed

// ReferencingForTest is the referencing map of the queued-write guard.
func ReferencingForTest() map[string][]string { return referencing }

// RunBatchForTest runs fns as one batch of the committer, in order, each
// declaring the tenant's balance rows ids, and returns each fn's answer
// (errBatchRedo when the batch would have run it again).
func (db *DB) RunBatchForTest(t Tenant, ids []string, fns ...func(*Tx) error) []error {
	return db.runBatchForTest(t, ids, false, fns)
}

// RunAloneForTest runs fn as the committer runs a request again after its
// batch failed to commit: in a batch of its own, writing at once what a
// batch queues for its commit.
func (db *DB) RunAloneForTest(t Tenant, ids []string, fn func(*Tx) error) error {
	return db.runBatchForTest(t, ids, true, []func(*Tx) error{fn})[0]
}

// RunBatchAddingForTest is RunBatchForTest with fn i also declaring an add
// of usd[i] to the tenant's daily volume under limit (WithDailyVolumeAdd;
// 0 declares none).
func (db *DB) RunBatchAddingForTest(t Tenant, ids []string, usd []int64, limit int64, fns ...func(*Tx) error) []error {
	return db.runBatchForTest(t, ids, false, fns, func(i int, r *batchReq) {
		if usd[i] != 0 {
			r.volumes = []declaredVolume{{tenant: t, usd: usd[i], limit: limit}}
		}
	})
}

func (db *DB) runBatchForTest(t Tenant, ids []string, alone bool, fns []func(*Tx) error, declare ...func(int, *batchReq)) []error {
	b := &batcher{db: db}
	batch := make([]*batchReq, len(fns))
	for i, fn := range fns {
		batch[i] = &batchReq{fn: fn, locks: []declaredLock{{tenant: t, ids: ids}}, done: make(chan batchResult, 1),
			alone: alone}
		for _, d := range declare {
			d(i, batch[i])
		}
	}
	redo := db.runBatch(b, batch)
	errs := make([]error, len(fns))
	for i, r := range batch {
		if slices.Contains(redo, r) {
			errs[i] = ErrBatchRedoForTest
			continue
		}
		errs[i] = (<-r.done).err
	}
	return errs
}

// ErrBatchRedoForTest is RunBatchForTest's answer for a fn the batch would
// have run again.
var ErrBatchRedoForTest = errors.New("store: the batch would run this fn again")

// BalancesCachedForTest reports whether the batch's balance cache holds
// every one of the tenant's rows ids.
func (q Q) BalancesCachedForTest(t Tenant, ids ...string) bool {
	_, ok := q.balances().get(t, ids)
	return ok
}

// QueuedDeltasForTest counts the ledger writes and daily-volume adds the
// running fn has queued for the batch's commit (at_commit.go).
func (q Q) QueuedDeltasForTest() (ledger, volume int) {
	if q.outbox == nil {
		return 0, 0
	}
	for _, w := range q.outbox.writes {
		if w.ledger != nil {
			ledger++
		}
		if w.volume != nil {
			volume++
		}
	}
	return ledger, volume
}

// ExecUnguardedForTest sends a statement through the transaction without
// its guards: no queued write is written first and no cache is emptied, as
// a change the store does not know of would.
func (q Q) ExecUnguardedForTest(ctx context.Context, query string, args ...any) error {
	_, err := q.x.ExecContext(ctx, q.rebind(query), args...)
	return err
}

// ColumnTypeForTest is the type the store read for a table's column when it
// opened (PostgreSQL; "" when not read).
func (db *DB) ColumnTypeForTest(table, col string) string { return db.cols[table][col] }

// EventCounts returns event_counts summed over shards and the true counts
// of events, both keyed "platform/env/type".
func (db *DB) EventCounts(ctx context.Context) (counters, truth map[string]int64, err error) {
	counters, truth = map[string]int64{}, map[string]int64{}
	for _, read := range []struct {
		query string
		into  map[string]int64
	}{
		{"SELECT platform_id, env, type, SUM(n) FROM event_counts GROUP BY platform_id, env, type HAVING SUM(n) <> 0", counters},
		{"SELECT platform_id, env, type, COUNT(*) FROM events GROUP BY platform_id, env, type", truth},
	} {
		rows, err := db.Read().query(ctx, read.query)
		if err != nil {
			return nil, nil, err
		}
		err = ledgerEachRow(rows, func(r *sql.Rows) error {
			var p, e, typ string
			var n int64
			if err := r.Scan(&p, &e, &typ, &n); err != nil {
				return err
			}
			read.into[p+"/"+e+"/"+typ] = n
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return counters, truth, nil
}
