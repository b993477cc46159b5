package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Inside a batch of several a fn's ledger write is queued and
// the batch writes all of them at its commit, each balance row once with
// the sum of its changes (at_commit.go). One batch, fns in order: two
// queued transfers; a fn that reads the payer's balance (the read must
// write the queue first and see 700) and then fails, so its rollback undoes
// that write and the queue must be queued again; a transfer of exactly what
// is left (refused if the queue were written twice or lost); one refused
// for want of funds. Then the books must agree: balances, postings,
// statement buckets. Both engines queue (SQLite from the rows its batch
// read when it began).
func TestAtCommit_LedgerWritesQueuedAndSummed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		accts := c.accounts(t, 2, 1000)
		a, b := accts[0].ID, accts[1].ID
		boom := errors.New("boom")
		pay := queuedPay(t, db, c, a, b)
		errs := db.RunBatchForTest(c.t, []string{a, b},
			pay(100, true),
			pay(200, true),
			func(tx *store.Tx) error {
				bal, err := tx.GetLedgerBalance(ctx, c.t, a)
				if err != nil {
					return err
				}
				if bal.Posted != 700 {
					t.Errorf("a read in the batch sees %d, want 700", bal.Posted)
				}
				return boom
			},
			pay(700, false), // the rollback emptied the cache: written at once
			pay(1, false),
		)
		var short *ledger.InsufficientFundsError
		if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], boom) || errs[3] != nil || !errors.As(errs[4], &short) {
			t.Fatalf("answers %v; want nil, nil, boom, nil, insufficient funds", errs)
		}
		if got := c.posted(t, accts[0]); got != 0 {
			t.Fatalf("payer holds %d, want 0", got)
		}
		if got := c.posted(t, accts[1]); got != 2000 {
			t.Fatalf("payee holds %d, want 2000", got)
		}
		if err := c.l.Audit(ctx, c.t); err != nil { // balances = postings, buckets = postings
			t.Fatal(err)
		}
	})
}

// A batch of one request queues its ledger write as a batch of several
// does (the batch's lock statement took its rows); a request running alone
// after a failed commit writes at once. Both leave the same books.
func TestAtCommit_BatchOfOneQueuesAloneWritesAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		accts := c.accounts(t, 2, 1000)
		a, b := accts[0].ID, accts[1].ID
		pay := queuedPay(t, db, c, a, b)
		if errs := db.RunBatchForTest(c.t, []string{a, b}, pay(100, true)); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if err := db.RunAloneForTest(c.t, []string{a, b}, pay(100, false)); err != nil {
			t.Fatal(err)
		}
		if got := c.posted(t, accts[1]); got != 1200 {
			t.Fatalf("payee holds %d, want 1200", got)
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
	})
}

// queuedPay returns fns that pay amount from a to b and check that the
// ledger write was queued for the commit, or not.
func queuedPay(t *testing.T, db *store.DB, c *committerLedger, a, b string) func(amount int64, queued bool) func(*store.Tx) error {
	return func(amount int64, queued bool) func(*store.Tx) error {
		return func(tx *store.Tx) error {
			_, err := c.l.Apply(context.Background(), tx, c.t, []ledger.TransferSpec{{Postings: move(a, b, amount)}})
			if n, _ := tx.QueuedDeltasForTest(); err == nil && (n == 1) != queued {
				t.Errorf("paying %d queued %d ledger writes, want queued %v", amount, n, queued)
			}
			return err
		}
	}
}

// The summed update is versioned: were a balance row changed behind the
// batch's back (here by a statement the store does not see), the batch
// must not commit, and every fn runs again alone. Nothing of the batch
// stands meanwhile.
func TestAtCommit_ChangedRowFailsTheBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		accts := c.accounts(t, 2, 1000)
		a, b := accts[0].ID, accts[1].ID
		pay := func(tx *store.Tx) error {
			_, err := c.l.Apply(context.Background(), tx, c.t, []ledger.TransferSpec{{Postings: move(a, b, 100)}})
			return err
		}
		errs := db.RunBatchForTest(c.t, []string{a, b}, pay, func(tx *store.Tx) error {
			if err := pay(tx); err != nil {
				return err
			}
			return tx.ExecUnguardedForTest(ctx, `UPDATE ledger_balances SET version = version + 1 WHERE account_id = ?`, a)
		})
		for i, err := range errs {
			if !errors.Is(err, store.ErrBatchRedoForTest) {
				t.Fatalf("fn %d answered %v; want to run again", i, err)
			}
		}
		if got := c.posted(t, accts[0]); got != 1000 {
			t.Fatalf("payer holds %d after a batch that did not commit, want 1000", got)
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
	})
}

// R-ERR-21: a batch's later adds to the daily-volume shard it already holds
// are queued and written as one sum at the commit; they never pass the
// shard's share (an add that would goes the slow way, over every shard), a
// rolled-back fn's add is not counted, and the day's total is exact.
func TestAtCommit_VolumeAddsQueuedAndSummed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		const limit = 8000 // a share of 1000 per shard
		pg := db.Engine() == store.Postgres
		boom := errors.New("boom")
		// The day's rows exist (the first add of a day makes them), so the
		// batch's first add takes the fast path.
		if !addVolume(t, db, tn, day, 0, limit) {
			t.Fatal("adding 0 was refused")
		}
		add := func(usd int64, queued bool, then error) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				ok, err := tx.AddDailyVolume(ctx, tn, day, usd, limit)
				if err != nil {
					return err
				}
				if !ok {
					t.Errorf("adding %d was refused", usd)
				}
				if _, n := tx.QueuedDeltasForTest(); (n == 1) != (queued && pg) {
					t.Errorf("adding %d queued %d adds, want queued %v", usd, n, queued && pg)
				}
				return then
			}
		}
		errs := db.RunBatchForTest(tn, nil,
			add(400, false, nil), // the fast path: the batch now holds the shard
			add(300, true, nil),
			add(100, true, boom), // rolled back: the cache is emptied
			add(200, false, nil), // fast path again, over the queued 300
			add(200, false, nil), // does not fit the share (1000): spread
		)
		if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], boom) || errs[3] != nil || errs[4] != nil {
			t.Fatalf("answers %v", errs)
		}
		if got, err := db.Read().DailyVolume(ctx, tn, day); err != nil || got != 1100 {
			t.Fatalf("DailyVolume = %d, %v; want 1100", got, err)
		}
		// A shard row changed behind the batch's back fails the batch.
		if !pg {
			return
		}
		errs = db.RunBatchForTest(tn, nil, add(10, false, nil), add(10, true, nil), func(tx *store.Tx) error {
			return tx.ExecUnguardedForTest(ctx, `UPDATE daily_volumes SET usd = usd + 1 WHERE platform_id = ?`, tn.PlatformID)
		})
		for i, err := range errs {
			if !errors.Is(err, store.ErrBatchRedoForTest) {
				t.Fatalf("fn %d answered %v; want to run again", i, err)
			}
		}
		if got, err := db.Read().DailyVolume(ctx, tn, day); err != nil || got != 1100 {
			t.Fatalf("DailyVolume = %d, %v after a batch that did not commit; want 1100", got, err)
		}
	})
}

// A queued write must never be written inside the fast path's own
// savepoint (volumes.go): when the add does not fit, the rollback to it
// would undo the queue's writes after they left the queue. Here the
// batch's queued ledger writes and volume add are pending when an add that
// does not fit the held shard takes the fast path, fails it, and spreads:
// every transfer must still be in the books.
func TestAtCommit_QueueSurvivesAFailedFastPath(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		accts := c.accounts(t, 2, 1000)
		a, b := accts[0].ID, accts[1].ID
		day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		const limit = 8000
		if !addVolume(t, db, c.t, day, 0, limit) {
			t.Fatal("adding 0 was refused")
		}
		pay := func(amount, usd int64) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				if _, err := c.l.Apply(context.Background(), tx, c.t, []ledger.TransferSpec{{Postings: move(a, b, amount)}}); err != nil {
					return err
				}
				if ok, err := tx.AddDailyVolume(ctx, c.t, day, usd, limit); err != nil || !ok {
					return fmt.Errorf("adding %d: %v, %w", usd, ok, err)
				}
				return nil
			}
		}
		errs := db.RunBatchForTest(c.t, []string{a, b}, pay(100, 600), pay(200, 300), pay(300, 500))
		for i, err := range errs {
			if err != nil {
				t.Fatalf("fn %d: %v", i, err)
			}
		}
		if got := c.posted(t, accts[1]); got != 1600 {
			t.Fatalf("payee holds %d, want 1600", got)
		}
		if got, err := db.Read().DailyVolume(ctx, c.t, day); err != nil || got != 1400 {
			t.Fatalf("DailyVolume = %d, %v; want 1400", got, err)
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
	})
}

// R-ERR-21: a batch whose requests declared their daily-volume adds
// (WithDailyVolumeAdd) locks the day's shard row with its balance rows when
// it begins, if the adds fit the shard's share together, and then decides
// every add in memory, the first one too, and writes their sum at the
// commit. Adds that do not fit together lock nothing and go the usual way.
// The limits hold either way.
func TestAtCommit_DeclaredVolumeAddsLockTheShardUpFront(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		day := db.Now()
		const limit = 8000 // a share of 1000 per shard
		pg := db.Engine() == store.Postgres
		if !addVolume(t, db, tn, day, 0, limit) { // the day's rows
			t.Fatal("adding 0 was refused")
		}
		add := func(usd, lim int64, queued, ok bool) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				added, err := tx.AddDailyVolume(ctx, tn, day, usd, lim)
				if err != nil {
					return err
				}
				if added != ok {
					t.Errorf("adding %d under %d: added %v, want %v", usd, lim, added, ok)
				}
				if _, n := tx.QueuedDeltasForTest(); (n == 1) != (queued && pg) {
					t.Errorf("adding %d queued %d adds, want queued %v", usd, n, queued && pg)
				}
				return nil
			}
		}
		total := func(want int64) {
			t.Helper()
			if got, err := db.Read().DailyVolume(ctx, tn, day); err != nil || got != want {
				t.Fatalf("DailyVolume = %d, %v; want %d", got, err, want)
			}
		}
		// 400 + 300 + 200 fit a share: each add is queued, the first too.
		errs := db.RunBatchAddingForTest(tn, nil, []int64{400, 300, 200}, limit,
			add(400, limit, true, true), add(300, limit, true, true), add(200, limit, true, true))
		if errs[0] != nil || errs[1] != nil || errs[2] != nil {
			t.Fatalf("answers %v", errs)
		}
		total(900)
		// 600 + 600 do not: nothing is locked up front, the first add takes
		// the fast path and the second spreads.
		errs = db.RunBatchAddingForTest(tn, nil, []int64{600, 600}, limit,
			add(600, limit, false, true), add(600, limit, false, true))
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("answers %v", errs)
		}
		total(2100)
		// Under a limit lowered below the day's total every shard's room is
		// gone (and some shard is over its share): nothing is locked, the
		// add is refused.
		errs = db.RunBatchAddingForTest(tn, nil, []int64{50}, 800, add(50, 800, false, false))
		if errs[0] != nil {
			t.Fatalf("answers %v", errs)
		}
		total(2100)
	})
}
