package httpapi

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/stablecoins"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// NodeOptions configure one paymentsd process: its API and the background
// work that runs beside it.
type NodeOptions struct {
	API      Options
	Webhooks webhooks.Options
	Rails    rails.Options
	// QuoteExpiryInterval is how often due quotes expire (default 5s).
	QuoteExpiryInterval time.Duration
}

// Node is one paymentsd process: the API server and its background work.
// cmd/paymentsd runs exactly this, and the HTTP tests build their server
// with NewNode and Start as well (newEnv), so what the tests drive is the
// wiring the binary serves. The two had drifted once: the binary ran the
// webhook runner, whose hand-off leases each new event's delivery as it is
// committed, and the tests did not, so POST /sandbox/webhooks/test passed
// its tests and answered 404 on the binary.
type Node struct {
	API  *Server
	db   *store.DB
	log  *slog.Logger
	opts NodeOptions
}

// NewNode builds the API server over db.
func NewNode(ctx context.Context, db *store.DB, log *slog.Logger, opts NodeOptions) (*Node, error) {
	if opts.QuoteExpiryInterval <= 0 {
		opts.QuoteExpiryInterval = 5 * time.Second
	}
	api, err := New(ctx, db, log, opts.API)
	if err != nil {
		return nil, err
	}
	return &Node{API: api, db: db, log: api.log, opts: opts}, nil
}

// Start starts the background work until ctx ends: maintenance, external
// account work, customer jobs, quote expiry, payment-document sweeps, agent
// action expiry, the webhook runner, the rail runner, the card runner, the
// stablecoin operations runner and UMA payment settlement. wait blocks until
// all of it has returned, so nothing of a stopped node still reads or writes
// (a test that drives the work by hand then owns the services alone).
func (n *Node) Start(ctx context.Context) (wait func()) {
	s := n.API
	var wg sync.WaitGroup
	wg.Go(func() { s.RunMaintenance(ctx) })
	wg.Go(func() { s.RunExternalAccountWork(ctx) })
	wg.Go(func() { s.RunCustomerJobs(ctx) })                                  // bulk customer imports, removal of unreferenced document files
	wg.Go(func() { s.RunQuoteExpiry(ctx, n.opts.QuoteExpiryInterval) })       // PENDING quotes past expiresAt become EXPIRED
	wg.Go(func() { s.RunPaymentDocumentWork(ctx) })                           // removal of attached, expired and abandoned payment-document files
	wg.Go(func() { s.RunAgentActionExpiry(ctx, n.opts.QuoteExpiryInterval) }) // agent actions waiting past their expiry fail
	railOpts := n.opts.Rails
	if railOpts.Log == nil {
		railOpts.Log = n.log
	}
	// The webhook runner writes its finished attempts before it returns.
	wg.Go(func() { webhooks.Run(ctx, n.db, n.log, n.opts.Webhooks) })
	// Rail settlement, failures and returns.
	wg.Go(func() { rails.Run(ctx, n.db, railOpts) })
	// Card network messages, card issuance with the issuer, authorization
	// expiry: waited for, since it writes.
	wg.Go(func() { s.RunCardWork(ctx) })
	// Stablecoin mints and burns through their provider's states.
	wg.Go(func() { s.stablecoinService().Run(ctx, stablecoins.RunnerOptions{Log: n.log}) })
	// Settlement of payments to UMA addresses (sandbox Lightning simulator).
	wg.Go(func() { s.umaService().RunPayments(ctx, n.log) })
	return wg.Wait
}
