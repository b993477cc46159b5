// Command paymentsd runs the payments service.
//
//	paymentsd [serve] [flags]               run the HTTP API (default)
//	paymentsd platforms create --name NAME  create a platform, print its tokens as JSON
//	paymentsd keys generate                 print a new key-encryption key (id:base64)
//	paymentsd keys rotate [flags]           re-seal the stored secrets under a new key
//
// Configuration comes from flags, or from the environment variables named in
// each flag's help; a flag wins over its variable.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/httpapi"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/quotes"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paymentsd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) >= 2 && args[0] == "platforms" && args[1] == "create" {
		return platformsCreate(ctx, args[2:], stdout, stderr)
	}
	if len(args) >= 2 && args[0] == "keys" && args[1] == "generate" {
		return keysGenerate(stdout)
	}
	if len(args) >= 2 && args[0] == "keys" && args[1] == "rotate" {
		return keysRotate(ctx, args[2:], stdout, stderr)
	}
	if len(args) >= 2 && args[0] == "limits" && args[1] == "set" {
		return limitsSet(ctx, args[2:], stdout, stderr)
	}
	if len(args) >= 1 && args[0] == "serve" {
		args = args[1:]
	}
	if len(args) >= 1 && !strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("unknown command %q (commands: serve, platforms create, keys generate, keys rotate, limits set)", args[0])
	}
	return serve(ctx, args, stdout, stderr)
}

// settings are the service's configuration.
type settings struct {
	addr            string
	databaseURL     string
	keysFile        string
	logLevel        string
	logFormat       string
	sandboxToken    string
	productionToken string
	rateLimit       float64
	maxBodyBytes    int64
	shutdownTimeout time.Duration
	webhookWorkers  int
	webhookPrivate  webhooks.Addresses
	blobDir         string
	publicURL       string
	pprofAddr       string
	pgGroupCommit   int
	volumeLimit     int64
	maxLiveCards    int64
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

func envInt(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

func databaseFlag(fs *flag.FlagSet, dst *string) {
	fs.StringVar(dst, "database-url", env("PAYMENTS_DATABASE_URL", "sqlite:./data/payments.db"),
		"database: sqlite:PATH or postgres://… ($PAYMENTS_DATABASE_URL)")
}

func parseServe(args []string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("paymentsd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.addr, "addr", env("PAYMENTS_ADDR", "127.0.0.1:8080"), "listen address ($PAYMENTS_ADDR)")
	databaseFlag(fs, &s.databaseURL)
	keysFlag(fs, &s.keysFile)
	fs.StringVar(&s.logLevel, "log-level", env("PAYMENTS_LOG_LEVEL", "info"), "debug, info, warn or error ($PAYMENTS_LOG_LEVEL)")
	fs.StringVar(&s.logFormat, "log-format", env("PAYMENTS_LOG_FORMAT", "json"), "json or text ($PAYMENTS_LOG_FORMAT)")
	fs.Float64Var(&s.rateLimit, "rate-limit", envFloat("PAYMENTS_RATE_LIMIT", 100),
		"requests per second per API token, 0 or less disables ($PAYMENTS_RATE_LIMIT)")
	fs.Int64Var(&s.maxBodyBytes, "max-body-bytes", envInt("PAYMENTS_MAX_BODY_BYTES", 1<<20),
		"largest JSON request body ($PAYMENTS_MAX_BODY_BYTES)")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on SIGTERM")
	fs.IntVar(&s.webhookWorkers, "webhook-workers", int(envInt("PAYMENTS_WEBHOOK_WORKERS", webhooks.DefaultWorkers)),
		"webhook deliveries this node makes at once ($PAYMENTS_WEBHOOK_WORKERS)")
	var err error
	if s.webhookPrivate, err = webhooks.ParseAddresses(os.Getenv("PAYMENTS_WEBHOOK_ALLOW_PRIVATE")); err != nil {
		return s, fmt.Errorf("PAYMENTS_WEBHOOK_ALLOW_PRIVATE: %w", err)
	}
	fs.Var(addressesFlag{&s.webhookPrivate}, "webhook-allow-private",
		"may webhook endpoints reach loopback, private and link-local addresses: true, false, or auto: only while a "+
			"SQLite installation serves one platform (a laptop) ($PAYMENTS_WEBHOOK_ALLOW_PRIVATE)")
	fs.StringVar(&s.blobDir, "blob-dir", env("PAYMENTS_BLOB_DIR", ""),
		"directory of uploaded files (KYC documents, bulk CSVs); default: blobs/ beside the SQLite file, else ./data/blobs ($PAYMENTS_BLOB_DIR)")
	fs.StringVar(&s.publicURL, "public-url", env("PAYMENTS_PUBLIC_URL", ""),
		"address customers reach this service at, the base of hosted KYC links; default http://ADDR ($PAYMENTS_PUBLIC_URL)")
	fs.StringVar(&s.pprofAddr, "pprof-addr", env("PAYMENTS_PPROF_ADDR", ""),
		"serve Go's /debug/pprof/ profiles on this address, e.g. 127.0.0.1:6060; off when empty ($PAYMENTS_PPROF_ADDR)")
	fs.IntVar(&s.pgGroupCommit, "pg-group-commit", int(envInt("PAYMENTS_PG_GROUP_COMMIT", 0)),
		"PostgreSQL only: how many batches of the batching committer run at once (0: the default, "+
			strconv.Itoa(store.DefaultBatchWorkers)+"; "+
			"negative: none, a transaction per transfer; docs/architecture.md) ($PAYMENTS_PG_GROUP_COMMIT)")
	fs.Int64Var(&s.volumeLimit, "daily-volume-limit", envInt("PAYMENTS_DAILY_VOLUME_LIMIT", quotes.DefaultDailyVolumeLimit),
		"daily volume limit of a tenant without its own (paymentsd limits set), in US cents of executed sending amounts per UTC day ($PAYMENTS_DAILY_VOLUME_LIMIT)")
	fs.Int64Var(&s.maxLiveCards, "max-live-cards", envInt("PAYMENTS_MAX_LIVE_CARDS", cards.DefaultMaxLiveCards),
		"cards a platform may hold per environment that are not CLOSED; POST /cards answers 409 CARD_LIMIT_REACHED at it ($PAYMENTS_MAX_LIVE_CARDS)")
	s.sandboxToken = os.Getenv("PAYMENTS_SANDBOX_TOKEN")
	s.productionToken = os.Getenv("PAYMENTS_PRODUCTION_TOKEN")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if s.blobDir == "" {
		s.blobDir = "./data/blobs"
		if path, ok := strings.CutPrefix(s.databaseURL, "sqlite:"); ok {
			s.blobDir = filepath.Join(filepath.Dir(strings.TrimPrefix(path, "//")), "blobs")
		}
	}
	if s.publicURL == "" {
		s.publicURL = "http://" + s.addr
	}
	if s.volumeLimit <= 0 {
		return s, fmt.Errorf("--daily-volume-limit must be positive, got %d", s.volumeLimit)
	}
	if s.maxLiveCards < 1 || s.maxLiveCards > cards.MaxLiveCardsCeiling {
		return s, fmt.Errorf("--max-live-cards must be from 1 to %d, got %d", cards.MaxLiveCardsCeiling, s.maxLiveCards)
	}
	return s, nil
}

func addressesMeaning(a webhooks.Addresses) string {
	switch a {
	case webhooks.AddressesAny:
		return "any address, including loopback and private networks"
	case webhooks.AddressesPublic:
		return "public addresses only"
	}
	return "any address while this is a SQLite installation serving one platform, else public addresses only"
}

// addressesFlag is --webhook-allow-private: auto, true or false; alone,
// true.
type addressesFlag struct{ v *webhooks.Addresses }

func (f addressesFlag) String() string {
	if f.v == nil {
		return webhooks.AddressesAuto.String()
	}
	return f.v.String()
}

func (f addressesFlag) Set(s string) error {
	a, err := webhooks.ParseAddresses(s)
	if err == nil {
		*f.v = a
	}
	return err
}

func (f addressesFlag) IsBoolFlag() bool { return true }

// rateLimitOption maps the flag to httpapi.Options: the flag documents "0 or
// less disables", while the zero Options value means "the default".
func rateLimitOption(flag float64) float64 {
	if flag <= 0 {
		return -1
	}
	return flag
}

func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want json or text", format)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.logLevel, cfg.logFormat, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	kr, err := loadKeyring(cfg.databaseURL, cfg.keysFile, log)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.databaseURL, store.Options{BatchWorkers: cfg.pgGroupCommit, Keyring: kr})
	if err != nil {
		return err
	}
	defer db.Close()
	tuneGC(db.Engine())
	version, _ := db.SchemaVersion(ctx)
	log.Info("database ready", "engine", string(db.Engine()), "schema_version", version)
	if err := sealSecrets(ctx, db, log); err != nil {
		return err
	}

	supplied := map[string]string{store.EnvSandbox: cfg.sandboxToken, store.EnvProduction: cfg.productionToken}
	for envName, creds := range supplied {
		if err := platforms.CheckCredentials(envName, creds); creds != "" && err != nil {
			return fmt.Errorf("PAYMENTS_%s_TOKEN: %w", strings.ToUpper(envName), err)
		}
	}
	p, created, err := platforms.BootstrapWith(ctx, db, supplied)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if created != nil {
		printCreated(stdout, *created)
	}

	log.Info("webhook endpoints", "allow_private", cfg.webhookPrivate.String(), "means", addressesMeaning(cfg.webhookPrivate))
	// Listening first: the webhook runner's node identity includes the
	// address, which no other live process can then hold.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	// Rail settlement, failures and returns; PAYMENTS_SANDBOX_CLOCK_FACTOR scales sandbox rail time (docs/sandbox.md).
	rails.SetClockFactor(envFloat("PAYMENTS_SANDBOX_CLOCK_FACTOR", rails.DefaultClockFactor))
	node, err := httpapi.NewNode(ctx, db, log, nodeOptions(cfg, ln.Addr().String()))
	if err != nil {
		return err
	}
	api := node.API
	// Waited for on shutdown: the webhook runner writes its finished
	// attempts before it returns (the database closes after).
	background := node.Start(ctx)
	backgroundDone := make(chan struct{})
	go func() { background(); close(backgroundDone) }()

	if cfg.pprofAddr != "" {
		if err := servePprof(ctx, cfg.pprofAddr, log); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("listening", "addr", ln.Addr().String(), "api", "http://"+ln.Addr().String()+"/"+httpapi.Version+"/",
		"platform_id", p.ID)
	errc := make(chan error, 1)
	// WrapListener: the server's own refusals (malformed requests, oversized
	// headers) are JSON errors too.
	go func() { errc <- srv.Serve(httpapi.WrapListener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down; waiting for in-flight requests", "timeout", cfg.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	select {
	case <-backgroundDone:
	case <-sctx.Done():
		log.Warn("background workers did not stop in time; unrecorded webhook attempts are resent after their lease")
	}
	log.Info("stopped")
	return nil
}

// printCreated shows the default platform made on the first start and the
// tokens generated for it, once: their secrets are not stored in clear.
// Environments whose credentials were supplied got no generated token.
func printCreated(w io.Writer, c platforms.Created) {
	fmt.Fprintf(w, "\nCreated the default platform %s.\n", c.PlatformID)
	if c.SandboxToken == "" && c.ProductionToken == "" {
		fmt.Fprint(w, "Its tokens are the ones you supplied (PAYMENTS_SANDBOX_TOKEN, PAYMENTS_PRODUCTION_TOKEN).\n\n")
		return
	}
	fmt.Fprint(w, "Save these credentials now; they are not shown again.\n")
	for _, t := range []struct{ name, creds, env string }{
		{"sandbox token:   ", c.SandboxToken, "PAYMENTS_SANDBOX_TOKEN"},
		{"production token:", c.ProductionToken, "PAYMENTS_PRODUCTION_TOKEN"},
	} {
		if t.creds == "" {
			t.creds = "the one supplied in " + t.env
		}
		fmt.Fprintf(w, "  %s %s\n", t.name, t.creds)
	}
	fmt.Fprintln(w)
}

// nodeOptions is the configuration of this process's httpapi.Node.
func nodeOptions(cfg settings, listenAddr string) httpapi.NodeOptions {
	return httpapi.NodeOptions{
		API: httpapi.Options{MaxBodyBytes: cfg.maxBodyBytes, RateLimit: rateLimitOption(cfg.rateLimit),
			BlobDir: cfg.blobDir, PublicURL: cfg.publicURL, WebhookAddresses: cfg.webhookPrivate, DailyVolumeLimit: cfg.volumeLimit,
			MaxLiveCards: int(cfg.maxLiveCards),
			OTPSender:    otpSenders(os.Getenv)},
		Webhooks: webhooks.Options{Workers: cfg.webhookWorkers, Addresses: cfg.webhookPrivate, NodeID: nodeID(listenAddr)},
	}
}

// nodeID names this process in webhook lease tokens: $PAYMENTS_NODE_ID, or
// the host name and the address it listens on, which only one live process
// holds at a time, so that a restart after a crash takes back its
// predecessor's leases (webhooks.Options.NodeID).
func nodeID(listenAddr string) string {
	if id := os.Getenv("PAYMENTS_NODE_ID"); id != "" {
		return id
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "" // no identity: leases expire instead
	}
	return host + "/" + listenAddr
}

func platformsCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paymentsd platforms create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var name, dbURL string
	fs.StringVar(&name, "name", "", "platform name (required)")
	databaseFlag(fs, &dbURL)
	var keysFile string
	keysFlag(fs, &keysFile)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if strings.TrimSpace(name) == "" {
		return errors.New("--name is required")
	}
	db, err := openStore(ctx, dbURL, keysFile, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, _, err := platforms.Bootstrap(ctx, db); err != nil {
		return err
	}
	c, err := platforms.Create(ctx, db, name, false)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(c)
}

// limitsSet stores a tenant's own daily volume limit; 0 removes it, so the
// serve flag's default applies again. Running nodes see it within a second.
func limitsSet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paymentsd limits set", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var platformID, envName, dbURL string
	var usd int64
	fs.StringVar(&platformID, "platform", "", "platform id (required)")
	fs.StringVar(&envName, "env", "", "sandbox or production (required)")
	fs.Int64Var(&usd, "daily-volume", -1, "daily volume limit in US cents; 0 restores the default (required)")
	databaseFlag(fs, &dbURL)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if platformID == "" || (envName != store.EnvSandbox && envName != store.EnvProduction) || usd < 0 {
		return errors.New("--platform, --env (sandbox or production) and --daily-volume (0 or more) are required")
	}
	db, err := openCommandStore(ctx, dbURL, nil) // a limit is no secret: no key ring needed
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Read().GetPlatform(ctx, platformID); err != nil {
		return fmt.Errorf("platform %s: %w", platformID, err)
	}
	t := store.Tenant{PlatformID: platformID, Env: envName}
	if err := db.Write().SetDailyVolumeLimit(ctx, t, usd); err != nil {
		return err
	}
	limit, own, err := db.Read().DailyVolumeLimit(ctx, t)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{"platformId": platformID, "env": envName,
		"dailyVolumeLimit": limit, "own": own})
}
