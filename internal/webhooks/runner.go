package webhooks

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Options configure the delivery workers of one node. Zero values take the
// defaults.
type Options struct {
	// Workers is how many deliveries this node makes at once (default
	// DefaultWorkers: an attempt mostly waits on the receiver's network, not
	// on this node).
	Workers int
	// PerTenant caps one tenant's deliveries in flight, so a slow receiver
	// leaves workers for the others (default Workers/2, at least 1).
	PerTenant int
	// RequestTimeout bounds one attempt: DNS, connect, TLS, request and the
	// response excerpt (default 10s).
	RequestTimeout time.Duration
	// Lease is how long a claimed delivery belongs to its worker; a node
	// that dies holds it this long (default RequestTimeout + 30s). It must
	// exceed RequestTimeout, or a slow attempt could be taken over while it
	// runs.
	Lease time.Duration
	// PollInterval is how often an idle node looks for due deliveries
	// (default 1s).
	PollInterval time.Duration
	// Addresses says which addresses endpoints may reach (default
	// AddressesAuto).
	Addresses Addresses
	// RootCAs, if set, replaces the system roots for verifying receivers'
	// TLS certificates (a private CA).
	RootCAs *x509.CertPool
	// NodeID, if set, names this node in its lease tokens, and the runner
	// releases the leases of that name when it starts: those of a
	// predecessor that crashed, which would otherwise wait out their leases
	// (and hold their tenants' caps) first. No two live nodes may share it;
	// paymentsd uses its host name and listening address, which only one
	// live process can hold. Empty: random tokens, nothing released.
	NodeID string
	// Backoff is the retry schedule (default DefaultBackoff).
	Backoff Backoff
	// Retention is how long events and their attempts are kept (default and
	// minimum 30 days).
	Retention time.Duration
	// PurgeInterval is how often old events are purged (default 10m).
	PurgeInterval time.Duration
}

// DefaultWorkers is Options.Workers' default. A tenant's deliveries go out
// at most PerTenant at a time, so one busy tenant's event rate is bounded
// by PerTenant over the time an attempt takes, and that time grows when the
// node's cores are busy. With 32 (16 per tenant), a node making 580
// transfers a second (2,300 events) kept up only while nothing went wrong:
// a receiver that paused for 300 ms every 10 s sent the node to its
// database queue, where each delivery costs more, and the backlog grew
// until the load stopped (22,753 pending after 45 s). With 128 none was
// left (docs/benchmarks.md, "Seventh session").
const DefaultWorkers = 128

// MinRetention is the shortest time events are kept (the events API
// promises at least 30 days).
const MinRetention = 30 * 24 * time.Hour

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.PerTenant <= 0 {
		o.PerTenant = max(1, o.Workers/2)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.Lease <= o.RequestTimeout {
		o.Lease = o.RequestTimeout + 30*time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	o.Backoff = o.Backoff.withDefaults()
	if o.Retention < MinRetention {
		o.Retention = MinRetention
	}
	if o.PurgeInterval <= 0 {
		o.PurgeInterval = 10 * time.Minute
	}
}

// Runner delivers queued events from the store. Every node runs one; they
// share the work through leases in the database.
type Runner struct {
	db   *store.DB
	log  *slog.Logger
	opts Options
	send *sender
	rec  *recorder
	w    *workers
	// kick wakes the dispatcher: a worker freed up, or a commit handed
	// deliveries over or left refused ones in the queue.
	kick chan struct{}
	// afterSend, if set (tests), runs after an attempt's HTTP exchange and
	// before its outcome is recorded: the window in which a crash leaves the
	// receiver served but nothing written.
	afterSend func(ctx context.Context)
}

// NewRunner makes a runner; Run starts it, once.
func NewRunner(db *store.DB, log *slog.Logger, opts Options) *Runner {
	opts.defaults()
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Runner{db: db, log: log, opts: opts,
		send: newSender(db, log, opts.RequestTimeout, NewGuard(db, opts.Addresses), opts.RootCAs, opts.PerTenant),
		rec:  newRecorder(db, log, opts.Backoff), w: newWorkers(opts.Workers, opts.PerTenant),
		kick: make(chan struct{}, 1)}
}

// Run delivers events and purges old ones until ctx ends, then waits for its
// goroutines. Cancelling ctx abandons attempts in flight without recording
// them, exactly as a crash would: their leases expire and the attempts are
// made again, with the same webhook-id. Attempts that had finished are
// recorded before Run returns.
func Run(ctx context.Context, db *store.DB, log *slog.Logger, opts Options) {
	NewRunner(db, log, opts).Run(ctx)
}

// Run is the package-level Run on this runner. While it runs, deliveries
// of events committed through its DB are handed to it directly
// (store.Handoff, workers.go); claims take the rest: retries, what a
// stopped node left, and what did not fit its queue.
func (r *Runner) Run(ctx context.Context) {
	// Make the installation's signing key now rather than on the first
	// delivery, so it exists (and is published) from the first start.
	if _, err := r.send.key.get(ctx); err != nil && ctx.Err() == nil {
		r.log.Error("webhook signing key", "error", err.Error())
	}
	if r.opts.NodeID != "" {
		n, err := r.db.Write().ReleaseLeasesOf(ctx, r.tokenPrefix())
		if err != nil && ctx.Err() == nil {
			r.log.Warn("release a previous run's webhook leases; they expire instead", "error", err.Error())
		} else if n > 0 {
			r.log.Info("released a previous run's webhook leases", "count", n, "node", r.opts.NodeID)
		}
	}
	r.w.setOpen(true)
	unregister := r.db.SetHandoff(r, r.opts.Lease)
	// Stopping: from the moment ctx ends, new events wait in the database
	// for a claim (by another node, or this one after a restart) instead of
	// in this runner's memory while it drains its attempts; those handed
	// over and not started are unleased, so they need not wait for their
	// leases to expire.
	var once sync.Once
	stopHandoffs := func() {
		once.Do(func() {
			unregister()
			r.releaseLeases(ctx, r.w.setOpen(false))
		})
	}
	context.AfterFunc(ctx, stopHandoffs)
	var wg sync.WaitGroup
	wg.Go(func() { r.maintain(ctx) })
	wg.Go(func() { r.rec.run(ctx) })
	r.dispatch(ctx)
	stopHandoffs() // done, or wait until done
	r.rec.close()  // the workers are done: write what they finished, then stop
	wg.Wait()
}

// releaseLeases gives back the leases of hand-overs that never started.
// It runs as the runner stops, so it does not take ctx's cancellation.
func (r *Runner) releaseLeases(ctx context.Context, cs []store.Claim) {
	if len(cs) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := r.db.Write().ReleaseLeases(wctx, cs); err != nil {
		r.log.Warn("release webhook leases; they expire instead", "count", len(cs), "error", err.Error())
	}
}

// LeaseToken implements store.Handoff; claims use it too.
func (r *Runner) LeaseToken() string { return r.tokenPrefix() + newLeaseToken() }

// tokenPrefix begins every lease token of this node ("" without a NodeID).
func (r *Runner) tokenPrefix() string {
	if r.opts.NodeID == "" {
		return ""
	}
	return r.opts.NodeID + "|"
}

// Reserve implements store.Handoff.
func (r *Runner) Reserve(t store.Tenant) bool { return r.w.reserve(t) }

// Deliver implements store.Handoff: after a commit, start what was handed
// over, and claim what was refused (it is in the queue now).
func (r *Runner) Deliver(cs []store.Claim) {
	r.rec.expect(cs)
	r.w.handed(cs)
	r.poke()
}

// Release implements store.Handoff.
func (r *Runner) Release(cs []store.Claim) { r.w.released(cs) }

func (r *Runner) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// handoffMargin: a handed-over delivery still waiting for a worker this
// close to the end of its lease is left to expire and be claimed, so an
// attempt never runs past its lease.
const handoffMargin = 5 * time.Second

// dispatch runs the deliveries handed over by commits as workers free up,
// and claims due deliveries from the database: every poll interval
// (retries come due there, and what other nodes left), at once while
// claims keep finding work, and while deliveries that did not fit this
// node's queue wait there. A claim takes as many as there are free workers,
// in one transaction.
func (r *Runner) dispatch(ctx context.Context) {
	a := &attemptPool{jobs: make(chan store.Claim), max: r.opts.Workers,
		deliver: func(c store.Claim) { r.deliver(ctx, c) },
		free: func(c store.Claim) {
			r.w.done(c)
			r.poke()
		}}
	defer a.wg.Wait()
	run := func(c store.Claim) { a.run(ctx, c) }
	// Looking past capped tenants' backlog costs as much as that backlog,
	// so after a look that found nothing the next waits a poll interval.
	var lookPastAt time.Time
	busy := false    // the last claim found work
	waiting := false // the last claim saw due deliveries it did not take
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		look := false
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			look = true
			poll.Reset(r.opts.PollInterval)
		case <-r.kick:
		}
		r.startHanded(run)
		if !look && (busy || waiting || r.w.backlogged()) && r.w.hasFree() {
			r.gather(ctx)
			r.startHanded(run)
			look = true
		}
		for look && ctx.Err() == nil {
			// While a backlog waits in the database (overflow, or a start
			// after a crash) a claim fills the queue that hand-overs use, up
			// to the same bound per tenant, instead of serving only the
			// workers free at that moment (often one, which made a delivery
			// cost a claim transaction and kept the node from catching up
			// under load). It refills the queue once less than a tenant's cap
			// of work that can start is left in it, so the backlog takes the
			// capacity the hand-overs leave.
			fill := r.w.backlogged()
			if fill && r.w.queuedRunnable() >= r.opts.PerTenant {
				break
			}
			free := r.w.takeFree()
			if free == 0 {
				break
			}
			req := store.ClaimRequest{Token: r.LeaseToken(), Lease: r.opts.Lease, Limit: free,
				PerTenant: r.opts.PerTenant, Finished: r.rec.pending(), Busy: busy, Handed: r.w.rowlessHeld(),
				PastCapped: !time.Now().Before(lookPastAt)}
			if fill {
				req.Limit += handoffQueueFactor * r.opts.PerTenant
				req.PerTenant *= 1 + handoffQueueFactor
			}
			res, err := r.db.ClaimBatch(ctx, req)
			if err != nil && ctx.Err() == nil {
				r.log.Warn("claim webhook deliveries", "error", err.Error())
			}
			drained := err == nil && !res.Waiting
			if req.PastCapped && res.Blocked {
				lookPastAt = time.Now().Add(r.opts.PollInterval)
			}
			if fill {
				r.w.claimedToQueue(res.Claims, free, drained)
				r.startHanded(run)
			} else {
				r.w.claimed(res.Claims, free, drained)
				for _, c := range res.Claims {
					run(c)
				}
			}
			busy, waiting = len(res.Claims) > 0, res.Waiting
			// A claim that took something without reaching its limit or
			// being held back by the cap may have more due behind it.
			look = busy && !res.Blocked && r.w.hasFree()
		}
	}
}

// attemptPool runs a runner's delivery attempts on long-lived goroutines: one
// is started when an attempt finds none waiting, up to the runner's worker
// count, and each then waits for the next attempt. (A goroutine per attempt
// grew its stack in the signing code every time: 0.13 s of a 10 s profile's
// 6 s of the server's CPU under load.) Only dispatch's goroutine calls run.
type attemptPool struct {
	jobs    chan store.Claim
	max     int
	started int
	wg      sync.WaitGroup
	deliver func(store.Claim) // the attempt
	free    func(store.Claim) // its worker slot freed
}

func (a *attemptPool) run(ctx context.Context, c store.Claim) {
	select {
	case a.jobs <- c:
		return
	default:
	}
	if a.started < a.max {
		a.started++
		a.wg.Go(func() { a.loop(ctx, c) })
		return
	}
	// Every goroutine is started, and the runner's workers count at most
	// max attempts at once: one is between two attempts.
	select {
	case a.jobs <- c:
	case <-ctx.Done():
		// Stopping: the lease expires, as an attempt's that ctx cut short.
		a.free(c)
	}
}

func (a *attemptPool) loop(ctx context.Context, c store.Claim) {
	for {
		a.deliver(c)
		a.free(c)
		select {
		case c = <-a.jobs:
		case <-ctx.Done():
			return
		}
	}
}

// startHanded gives queued handed-over deliveries to free workers.
func (r *Runner) startHanded(run func(store.Claim)) {
	for {
		c, ok := r.w.next()
		if !ok {
			return
		}
		if c.LeaseUntil.Sub(r.db.Now()) < r.opts.RequestTimeout+handoffMargin {
			r.w.done(c)
			continue
		}
		run(c)
	}
}

// claimLinger is how long a freed worker waits for others to free up, so
// that one claim transaction serves them all.
const claimLinger = 2 * time.Millisecond

// gather waits up to claimLinger for more workers to finish, or until all
// have.
func (r *Runner) gather(ctx context.Context) {
	linger := time.NewTimer(claimLinger)
	defer linger.Stop()
	for !r.w.idle() {
		select {
		case <-r.kick:
		case <-linger.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// deliver makes one attempt of a claimed delivery and hands the outcome to
// the recorder. No database transaction is open while the receiver is
// called.
func (r *Runner) deliver(ctx context.Context, c store.Claim) {
	actx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	o := r.send.send(actx, c.Tenant, c.EventID, c.Event.Envelope)
	cancel()
	if r.afterSend != nil {
		r.afterSend(ctx)
	}
	if ctx.Err() != nil {
		return // stopping: leave the lease to expire (see Run)
	}
	r.rec.add(finished{claim: c, out: o})
}

// maintain purges events past retention and secrets past their overlap.
func (r *Runner) maintain(ctx context.Context) {
	t := time.NewTicker(r.opts.PurgeInterval)
	defer t.Stop()
	for {
		r.purge(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Runner) purge(ctx context.Context) {
	const batch = 500
	cutoff := r.db.Now().Add(-r.opts.Retention)
	for ctx.Err() == nil {
		n, err := r.db.PurgeEvents(ctx, cutoff, batch)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("purge events", "error", err.Error())
			}
			return
		}
		if n > 0 {
			r.log.Debug("purged events", "count", n)
		}
		if n < batch {
			break
		}
	}
	if _, err := r.db.Write().PurgeWebhookSecrets(ctx, r.db.Now()); err != nil && ctx.Err() == nil {
		r.log.Warn("purge webhook secrets", "error", err.Error())
	}
}

func newLeaseToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hostOf names the receiver in logs without path or query, which may carry
// the receiver's own tokens.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
