package rails

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/paymentsd/paymentsd/internal/accounts"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Options configure the rail workers of one node. Zero values take the
// defaults.
type Options struct {
	// Workers is how many jobs this node works on at once (default 4).
	Workers int
	// Lease is how long a claimed job belongs to its worker; a node that
	// dies holds it this long (default 30s).
	Lease time.Duration
	// PollInterval is how often an idle node looks for due jobs (default
	// 250ms: sandbox ACH takes about three seconds).
	PollInterval time.Duration
	// Log receives the workers' logs (default: discarded).
	Log *slog.Logger
}

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Runner applies due rail steps. Every node runs one; they share the work
// through leases in the database, and each step commits with the job's new
// version, so a step is applied once even if a lease expires under a slow
// worker.
type Runner struct {
	db     *store.DB
	ledger *ledger.Service
	opts   Options
	// Test hooks: before runs after a job is claimed and before its step's
	// transaction; inTx runs inside that transaction after the step's effects
	// and before the job is updated (a crash there rolls everything back).
	before func(ctx context.Context, j store.RailJob)
	inTx   func(ctx context.Context, j store.RailJob)
}

// NewRunner makes a runner over db.
func NewRunner(db *store.DB, opts Options) *Runner {
	opts.defaults()
	return &Runner{db: db, ledger: accounts.NewLedger(db), opts: opts}
}

// Run applies due steps until ctx ends. Cancelling ctx abandons the steps in
// flight exactly as a crash would: their transactions roll back and their
// leases expire.
func Run(ctx context.Context, db *store.DB, opts Options) { NewRunner(db, opts).Run(ctx) }

// Run is the package-level Run on this runner.
func (r *Runner) Run(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := r.RunDue(ctx)
		if err != nil && ctx.Err() == nil {
			r.opts.Log.Warn("rail jobs", "error", err.Error())
		}
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(r.opts.PollInterval):
		}
	}
}

// RunDue claims the jobs due now (up to Workers), applies one step of each
// concurrently, and returns how many it claimed.
func (r *Runner) RunDue(ctx context.Context) (int, error) {
	jobs, err := r.db.ClaimRailJobs(ctx, newToken(), r.opts.Lease, r.opts.Workers)
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { r.work(ctx, j) })
	}
	wg.Wait()
	return len(jobs), nil
}

// Drain runs due jobs until none is due (tests and tools; with a zero clock
// factor it carries every payout to its end).
func (r *Runner) Drain(ctx context.Context) error {
	for {
		n, err := r.RunDue(ctx)
		if err != nil || n == 0 || ctx.Err() != nil {
			return err
		}
	}
}

func (r *Runner) work(ctx context.Context, j store.RailJob) {
	if r.before != nil {
		r.before(ctx, j)
	}
	if ctx.Err() != nil {
		return
	}
	err := r.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.RailJobByTransaction(ctx, j.Tenant, j.TransactionID, true)
		if err != nil {
			return err
		}
		if cur.Version != j.Version || cur.LeaseToken != j.LeaseToken || cur.State != store.RailJobPending {
			return store.ErrRailJobChanged
		}
		if r.inTx != nil {
			defer r.inTx(ctx, j)
		}
		return advanceJob(ctx, tx, r.ledger, cur, j.LeaseToken)
	})
	attrs := []any{"job_id", j.ID, "transaction_id", j.TransactionID, "rail", j.Rail, "step", j.Step,
		"platform_id", j.Tenant.PlatformID, "env", j.Tenant.Env, "attempt", j.Attempts}
	switch {
	case err == nil:
		r.opts.Log.Info("rail step applied", attrs...)
	case ctx.Err() != nil:
		// Stopping: the lease expires and the step is tried again.
	case errors.Is(err, store.ErrRailJobChanged):
		r.opts.Log.Warn("rail job changed under its worker; step not applied", attrs...)
	default:
		r.opts.Log.Error("rail step failed; will retry", append(attrs, "error", err.Error())...)
		backoff := min(time.Duration(1<<min(j.Attempts, 12))*time.Second, 10*time.Minute)
		if rerr := r.db.Write().ReleaseRailJob(ctx, j.ID, j.LeaseToken, err.Error(), r.db.Now().Add(backoff)); rerr != nil {
			r.opts.Log.Error("release rail job", append(attrs, "error", rerr.Error())...)
		}
	}
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
