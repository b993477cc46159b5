// Package httpapi is the HTTP layer: routing under /2025-10-13/, credentials,
// idempotency, strict request decoding, pagination and the one mapping from
// errors to responses. Handlers are thin: decode, call a service, encode.
package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/internal/dashboard"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/ratelimit"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/tokens"
	"github.com/paymentsd/paymentsd/internal/wallets"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// Version is the API major version, the first path segment (R-VER-01).
const Version = "2025-10-13"

// Options configure the HTTP layer.
type Options struct {
	// MaxBodyBytes caps JSON request bodies (default 1 MiB); larger is 413.
	MaxBodyBytes int64
	// RateLimit is requests per second per token (default 100), with bursts
	// of RateBurst (default 2×RateLimit). Zero or less disables limiting.
	RateLimit float64
	RateBurst int
	// IdempotencyWait is how long a duplicate request waits for the first one
	// to finish before getting 409 OPERATION_IN_PROGRESS (default 10s).
	IdempotencyWait time.Duration
	// IdempotencyLock is how long a claim on a key holds before a retry may
	// take it over because its holder died (default 60s).
	IdempotencyLock time.Duration
	// BlobDir is where uploaded files (KYC documents, bulk-import CSVs) are
	// kept (default ./data/blobs, created on first use).
	BlobDir string
	// DailyVolumeLimit is the daily volume limit, in US cents, of a tenant
	// without one of its own (0: quotes.DefaultDailyVolumeLimit).
	DailyVolumeLimit int64
	// MaxLiveCards is a platform's live-card maximum per environment: POST
	// /cards answers 409 CARD_LIMIT_REACHED at it, CLOSED cards not counted
	// (R-CARD-04; 0: cards.DefaultMaxLiveCards).
	MaxLiveCards int
	// PublicURL is this service's address as customers reach it (scheme and
	// host, no trailing slash), the base of hosted KYC links; empty uses
	// the request's Host over http.
	PublicURL string
	// WebhookAddresses says which addresses webhook endpoints may reach,
	// checked when an endpoint is configured and when the test webhook is
	// sent (default webhooks.AddressesAuto; cmd/paymentsd passes the same
	// setting to the delivery workers).
	WebhookAddresses webhooks.Addresses
	// WalletSealer encrypts embedded-wallet secrets at rest (signing keys,
	// delegated keys). Default: wallets.NewLocalSealer keyed by a random
	// data key kept in server_secrets ("wallet-sealing"), which the store
	// itself seals under the operator's key-encryption keys (internal/keyring),
	// so a copy of the database without the key file opens no wallet key, and
	// rotating the key-encryption keys re-seals the data key.
	WalletSealer wallets.Sealer
	// OTPSender delivers production one-time codes of wallet credentials
	// (wallets.Senders: SMTP email, Twilio SMS). Without one, production
	// EMAIL_OTP and SMS_OTP credentials are refused clearly; the sandbox
	// records its messages instead of sending them.
	OTPSender wallets.OTPSender
}

func (o *Options) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.RateLimit == 0 {
		o.RateLimit = 100
	}
	if o.RateBurst <= 0 {
		o.RateBurst = int(2 * o.RateLimit)
		if o.RateBurst < 1 {
			o.RateBurst = 1
		}
	}
	if o.IdempotencyWait <= 0 {
		o.IdempotencyWait = 10 * time.Second
	}
	if o.IdempotencyLock <= 0 {
		o.IdempotencyLock = 60 * time.Second
	}
}

// Server holds the services the handlers call.
type Server struct {
	db      *store.DB
	tokens  *tokens.Service
	config  *platformconfig.Service
	cursors *page.Codec
	guard   *webhooks.Guard
	log     *slog.Logger
	metrics *metrics
	limiter *ratelimit.Limiter
	opts    Options
	mux     *http.ServeMux
	handler http.Handler
	// table is every registered route, as registered (handle).
	table []route
	// idemWaits wakes duplicates waiting on an in-flight key
	// (idempotency_wait.go).
	idemWaits idemWaits
}

// New builds the server and its routes.
func New(ctx context.Context, db *store.DB, log *slog.Logger, opts Options) (*Server, error) {
	opts.defaults()
	secret, err := db.ServerSecret(ctx, "cursor-hmac")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.WalletSealer == nil {
		sealing, err := db.ServerSecret(ctx, "wallet-sealing")
		if err != nil {
			return nil, err
		}
		if opts.WalletSealer, err = wallets.NewLocalSealer(sealing); err != nil {
			return nil, err
		}
	}
	guard := webhooks.NewGuard(db, opts.WebhookAddresses)
	s := &Server{
		db:      db,
		tokens:  &tokens.Service{DB: db},
		config:  &platformconfig.Service{DB: db, CheckWebhookEndpoint: guard.CheckEndpoint},
		cursors: page.NewCodec(secret),
		guard:   guard,
		log:     log,
		metrics: newMetrics(db.BatchStats),
		opts:    opts,
		mux:     http.NewServeMux(),
	}
	if opts.RateLimit > 0 {
		s.limiter = ratelimit.New(opts.RateLimit, opts.RateBurst)
	}
	s.routes()
	s.wireDelegations()
	dash, err := dashboard.New(dashboard.Options{API: s, DB: db, Tokens: s.tokens, Log: log, PublicURL: opts.PublicURL})
	if err != nil {
		return nil, err
	}
	s.mux.Handle("/dashboard", dash)
	s.mux.Handle("/dashboard/", dash)
	s.handler = s.requestID(s.observe(s.recoverPanics(s.mux)))
	return s, nil
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Tokens exposes the token service (the command line uses it).
func (s *Server) Tokens() *tokens.Service { return s.tokens }
