package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The batching committer's contract, on the ledger's money movements: every
// transfer goes through InBatchTx with its balance rows declared
// (store.WithLedgerLocks), as POST /quotes executes them.

// committerLedger is a tenant with funded INTERNAL accounts.
type committerLedger struct {
	db *store.DB
	l  *ledger.Service
	t  store.Tenant
}

func newCommitterLedger(t *testing.T, db *store.DB) *committerLedger {
	t.Helper()
	p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: time.Now()}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }); err != nil {
		t.Fatal(err)
	}
	return &committerLedger{db: db, l: ledger.New(db), t: store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}}
}

// accounts opens n accounts, each funded with amount.
func (c *committerLedger) accounts(t *testing.T, n int, amount int64) []ledger.Account {
	t.Helper()
	world, err := c.l.SystemAccount(ctx, c.t, ledger.CodeWorld, "USD")
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Account
	var fund []ledger.TransferSpec
	for range n {
		a, err := c.l.CreateAccount(ctx, c.t, ledger.AccountSpec{Currency: "USD", Kind: ledger.Internal, Name: "c"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
		if amount > 0 {
			fund = append(fund, ledger.TransferSpec{Postings: move(world.ID, a.ID, amount)})
		}
	}
	if len(fund) > 0 {
		if _, err := c.l.Commit(ctx, c.t, fund); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func move(from, to string, amount int64) []ledger.PostingSpec {
	return []ledger.PostingSpec{{AccountID: from, Currency: "USD", Amount: -amount}, {AccountID: to, Currency: "USD", Amount: amount}}
}

// transfer moves amount through db's committer, declaring both rows, as
// the quotes service does; id "" lets the ledger choose one.
func (c *committerLedger) transfer(db *store.DB, transferID, from, to string, amount int64) error {
	lctx := store.WithLedgerLocks(ctx, c.t, from, to)
	return db.InBatchTx(lctx, func(tx *store.Tx) error {
		_, err := c.l.Apply(context.WithoutCancel(lctx), tx, c.t,
			[]ledger.TransferSpec{{ID: transferID, Postings: move(from, to, amount)}})
		return err
	})
}

func (c *committerLedger) posted(t *testing.T, a ledger.Account) int64 {
	t.Helper()
	b, err := c.l.Balance(ctx, c.t, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b.Posted
}

// Partial failure inside a batch: each sender asks at once for one
// transfer it can afford and one it cannot (it never receives money, so
// which runs first does not matter). The refused ones fail with
// insufficient funds alone; the others commit, and every balance is what
// the committed ones make it. The sleep only makes batches of several
// likely; BatchStats shows that they formed.
func TestCommitter_PartialFailureInsideABatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		const senders, funding = 12, 1000
		from := c.accounts(t, senders, funding)
		to := c.accounts(t, senders, 0)
		before := db.BatchStats()
		errs := make([]error, 2*senders)
		var wg sync.WaitGroup
		for i := range 2 * senders {
			amount := int64(funding / 2)
			if i%2 == 1 {
				amount = funding + 1
			}
			wg.Go(func() { errs[i] = c.transfer(db, "", from[i/2].ID, to[i/2].ID, amount) })
		}
		wg.Wait()
		for i, err := range errs {
			var short *ledger.InsufficientFundsError
			if i%2 == 1 && !errors.As(err, &short) {
				t.Fatalf("transfer %d (more than the balance): %v, want insufficient funds", i, err)
			}
			if i%2 == 0 && err != nil {
				t.Fatalf("transfer %d (affordable): %v", i, err)
			}
		}
		for i := range senders {
			if got := c.posted(t, from[i]); got != funding/2 {
				t.Fatalf("sender %d: %d, want %d", i, got, funding/2)
			}
			if got := c.posted(t, to[i]); got != funding/2 {
				t.Fatalf("receiver %d: %d, want %d", i, got, funding/2)
			}
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
		st := db.BatchStats()
		if st.Failures != before.Failures {
			t.Fatalf("%d batches failed; a refusal must not fail its batch", st.Failures-before.Failures)
		}
		t.Logf("%d calls in %d commits", st.Transactions-before.Transactions, st.Commits-before.Commits)
	})
}

// A crash between a batch's decisions and its commit: while every batch's
// commit fails, every transfer fails and nothing of any is visible; once
// commits work again the same transfers (same ids) run once each, and a
// third attempt finds them done. When one commit fails, each transfer
// still commits exactly once.
func TestCommitter_CrashBetweenDecideAndCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		const n, funding = 10, 1000
		from := c.accounts(t, n, funding)
		to := c.accounts(t, n, 0)
		ids := make([]string, n)
		for i := range ids {
			ids[i] = id.New(ledger.TransferIDPrefix)
		}
		crash := errors.New("connection lost before the commit")
		run := func() []error {
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { errs[i] = c.transfer(db, ids[i], from[i].ID, to[i].ID, 100) })
			}
			wg.Wait()
			return errs
		}
		rows := func() store.LedgerCounts {
			r, err := db.Read().CountLedgerRows(ctx, c.t)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		start := rows()
		db.FailBatchCommits(func() error { return crash })
		for i, err := range run() {
			if !errors.Is(err, crash) {
				t.Fatalf("transfer %d while commits fail: %v, want the commit's failure", i, err)
			}
		}
		if got := rows(); got != start {
			t.Fatalf("ledger rows %+v after failed commits, want %+v", got, start)
		}
		for i := range n {
			if got := c.posted(t, from[i]); got != funding {
				t.Fatalf("sender %d: %d after failed commits, want %d", i, got, funding)
			}
		}
		db.FailBatchCommits(nil)
		for i, err := range run() {
			if err != nil {
				t.Fatalf("transfer %d, retried: %v", i, err)
			}
		}
		for i, err := range run() {
			if !errors.Is(err, ledger.ErrDuplicateTransfer) {
				t.Fatalf("transfer %d, third time: %v, want ErrDuplicateTransfer", i, err)
			}
		}
		var once atomic.Bool
		db.FailBatchCommits(func() error {
			if once.CompareAndSwap(false, true) {
				return crash
			}
			return nil
		})
		for i := range ids {
			ids[i] = id.New(ledger.TransferIDPrefix)
		}
		// A batch's fns run again, alone, when its commit fails; a lone
		// fn's failed commit is its caller's error (as with InTx), and the
		// caller's retry with the same id runs it once.
		for i, err := range run() {
			if errors.Is(err, crash) {
				err = c.transfer(db, ids[i], from[i].ID, to[i].ID, 100)
			}
			if err != nil {
				t.Fatalf("transfer %d, one commit failing: %v", i, err)
			}
		}
		if !once.Load() {
			t.Fatal("no commit failed")
		}
		db.FailBatchCommits(nil)
		for i := range n {
			if got, want := c.posted(t, from[i]), int64(funding-200); got != want {
				t.Fatalf("sender %d: %d, want %d", i, got, want)
			}
			if got := c.posted(t, to[i]); got != 200 {
				t.Fatalf("receiver %d: %d, want 200", i, got)
			}
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
	})
}

// Two nodes (two *store.DB over one database, each with its own batch
// workers) move money at random among a few shared accounts, in both
// directions. No batch fails and no fn runs again (PostgreSQL answers a
// deadlock by failing one side's statement, after deadlock_timeout, and
// the committer runs that fn again), nothing is lost or created, and every balance equals its
// postings (Audit).
func TestCommitter_TwoNodesRaceOnTheSameAccounts(t *testing.T) {
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		nodes := []*store.DB{open(store.Options{}), open(store.Options{})}
		c := newCommitterLedger(t, nodes[0])
		const accounts, funding, perNode, each = 5, 10_000, 8, 25
		accts := c.accounts(t, accounts, funding)
		var ok, refused atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, len(nodes)*perNode)
		for n, db := range nodes {
			for g := range perNode {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(n), uint64(g)))
					for range each {
						a, b := accts[r.IntN(accounts)], accts[r.IntN(accounts)]
						if a.ID == b.ID {
							continue
						}
						err := c.transfer(db, "", a.ID, b.ID, 1+r.Int64N(funding/3))
						var short *ledger.InsufficientFundsError
						switch {
						case err == nil:
							ok.Add(1)
						case errors.As(err, &short):
							refused.Add(1)
						default:
							errs <- fmt.Errorf("node %d: %w", n, err)
							return
						}
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var total int64
		for _, a := range accts {
			p := c.posted(t, a)
			if p < 0 {
				t.Fatalf("account %s: %d", a.ID, p)
			}
			total += p
		}
		if total != accounts*funding {
			t.Fatalf("money on the accounts %d, want %d", total, accounts*funding)
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
		for i, db := range nodes {
			if st := db.BatchStats(); st.Failures != 0 || st.Retries != 0 {
				t.Fatalf("node %d: batches failed or fns ran again (a deadlock): %+v", i, st)
			}
		}
		t.Logf("%d committed, %d refused; batches %+v and %+v", ok.Load(), refused.Load(), nodes[0].BatchStats(), nodes[1].BatchStats())
	})
}

// A batch's transaction on PostgreSQL sends BEGIN with its first statement
// and COMMIT with its last, each pair in one pipeline (batch_tx.go). A
// failure in either pipeline leaves nothing of the transaction behind, and
// the connection is rolled back and used again, not thrown away; a
// shortfall in the commit statement's row check (paymentsd_expect_rows)
// keeps its COMMIT from running. SQLite runs the same statements one by one
// in database/sql's transaction.
func TestCommitter_PipelinedBeginAndCommit(t *testing.T) {
	storetest.EachWith(t, store.Options{MaxConns: 1}, func(t *testing.T, db *store.DB) {
		if err := db.ExecRaw(ctx, "CREATE TABLE pipeline_probe (n INTEGER PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		pg := db.Engine() == store.Postgres
		backend := func() string {
			if !pg {
				return ""
			}
			pid, err := db.QueryString(ctx, "SELECT CAST(pg_backend_pid() AS TEXT)")
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		rows := func() string {
			s, err := db.QueryString(ctx, "SELECT COALESCE(CAST(SUM(n) AS TEXT), '0') || '/' || CAST(COUNT(*) AS TEXT) FROM pipeline_probe")
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		ins := func(n int) string { return fmt.Sprintf("INSERT INTO pipeline_probe (n) VALUES (%d)", n) }
		conn := backend()
		if b, c := db.PipelineForTest(ctx, ins(1), ins(2)); b != nil || c != nil {
			t.Fatalf("begin %v, commit %v", b, c)
		}
		if got := rows(); got != "3/2" {
			t.Fatalf("sum/count %s after a committed pipeline, want 3/2", got)
		}
		if b, _ := db.PipelineForTest(ctx, ins(1), ins(3)); !errors.Is(b, store.ErrConflict) {
			t.Fatalf("a failing first statement: begin %v, want ErrConflict", b)
		}
		if _, c := db.PipelineForTest(ctx, ins(4), ins(2)); !errors.Is(c, store.ErrConflict) {
			t.Fatalf("a failing last statement: commit %v, want ErrConflict", c)
		}
		if pg {
			_, c := db.PipelineForTest(ctx, ins(5), "SELECT paymentsd_expect_rows(0, 1)")
			if !errors.Is(c, store.ErrQueuedDeltaMissedForTest) {
				t.Fatalf("a row check short of its rows: commit %v, want the missed-delta error", c)
			}
		}
		if got := rows(); got != "3/2" {
			t.Fatalf("sum/count %s after failed pipelines, want 3/2: a failed one committed", got)
		}
		if b, c := db.PipelineForTest(ctx, "", ""); b != nil || c != nil {
			t.Fatalf("an empty transaction: begin %v, commit %v", b, c)
		}
		if got := backend(); got != conn {
			t.Fatalf("backend %s after the failed pipelines, want %s: the connection was thrown away, not rolled back", got, conn)
		}
	})
}
