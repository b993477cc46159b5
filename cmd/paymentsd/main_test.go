package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// --rate-limit 0 (or less) disables limiting, as its help says; the zero
// value of httpapi.Options would otherwise mean the default of 100/s.
func TestRateLimitFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want float64
	}{{nil, 100}, {[]string{"--rate-limit", "0"}, -1}, {[]string{"--rate-limit", "-3"}, -1}, {[]string{"--rate-limit", "250"}, 250}} {
		s, err := parseServe(c.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := rateLimitOption(s.rateLimit); got != c.want {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
}

func TestParseServe_Defaults(t *testing.T) {
	t.Setenv("PAYMENTS_ADDR", "")
	t.Setenv("PAYMENTS_DATABASE_URL", "")
	s, err := parseServe(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.addr != "127.0.0.1:8080" || s.databaseURL != "sqlite:./data/payments.db" || s.publicURL != "http://127.0.0.1:8080" {
		t.Fatalf("%+v", s)
	}
	if _, err := parseServe([]string{"extra"}, io.Discard); err == nil {
		t.Fatal("stray arguments must be refused")
	}
}

// Profiles are off unless asked for, and then served on their own listener.
func TestPprofFlag(t *testing.T) {
	t.Setenv("PAYMENTS_PPROF_ADDR", "")
	if s, err := parseServe(nil, io.Discard); err != nil || s.pprofAddr != "" {
		t.Fatalf("default pprof address %q (%v), want off", s.pprofAddr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := servePprof(ctx, addr, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get("http://" + addr + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pprof cmdline: %d", res.StatusCode)
	}
}

// The webhook node identity: the override, else the host name and the
// listening address.
func TestNodeID(t *testing.T) {
	t.Setenv("PAYMENTS_NODE_ID", "")
	got := nodeID("127.0.0.1:8080")
	if host, err := os.Hostname(); err == nil && host != "" && got != host+"/127.0.0.1:8080" {
		t.Fatalf("nodeID = %q, want %q", got, host+"/127.0.0.1:8080")
	}
	t.Setenv("PAYMENTS_NODE_ID", "node-7")
	if got := nodeID("127.0.0.1:8080"); got != "node-7" {
		t.Fatalf("override: %q", got)
	}
}

// PostgreSQL's batching committer runs with the store's default number of
// batches (0) unless told otherwise; a negative number turns it off.
func TestPgGroupCommitFlag(t *testing.T) {
	t.Setenv("PAYMENTS_PG_GROUP_COMMIT", "")
	if s, err := parseServe(nil, io.Discard); err != nil || s.pgGroupCommit != 0 {
		t.Fatalf("default %d (%v), want 0", s.pgGroupCommit, err)
	}
	t.Setenv("PAYMENTS_PG_GROUP_COMMIT", "2")
	if s, err := parseServe(nil, io.Discard); err != nil || s.pgGroupCommit != 2 {
		t.Fatalf("from the environment %d (%v), want 2", s.pgGroupCommit, err)
	}
	if s, err := parseServe([]string{"-pg-group-commit", "1"}, io.Discard); err != nil || s.pgGroupCommit != 1 {
		t.Fatalf("from the flag %d (%v), want 1", s.pgGroupCommit, err)
	}
}

// Which addresses webhook endpoints may reach: auto unless told; the flag
// alone means true; an unreadable variable stops the start.
func TestWebhookAllowPrivateFlag(t *testing.T) {
	t.Setenv("PAYMENTS_WEBHOOK_ALLOW_PRIVATE", "")
	for _, c := range []struct {
		args []string
		want webhooks.Addresses
	}{
		{nil, webhooks.AddressesAuto},
		{[]string{"--webhook-allow-private"}, webhooks.AddressesAny},
		{[]string{"--webhook-allow-private=false"}, webhooks.AddressesPublic},
		{[]string{"--webhook-allow-private=auto"}, webhooks.AddressesAuto},
	} {
		if s, err := parseServe(c.args, io.Discard); err != nil || s.webhookPrivate != c.want {
			t.Errorf("%v: %v (%v), want %v", c.args, s.webhookPrivate, err, c.want)
		}
	}
	t.Setenv("PAYMENTS_WEBHOOK_ALLOW_PRIVATE", "false")
	if s, err := parseServe(nil, io.Discard); err != nil || s.webhookPrivate != webhooks.AddressesPublic {
		t.Errorf("from the environment: %v (%v)", s.webhookPrivate, err)
	}
	t.Setenv("PAYMENTS_WEBHOOK_ALLOW_PRIVATE", "sometimes")
	if _, err := parseServe(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "PAYMENTS_WEBHOOK_ALLOW_PRIVATE") {
		t.Errorf("unreadable setting: %v", err)
	}
}

// `paymentsd limits set` stores a tenant's daily volume limit in the
// database (0 removes it); --daily-volume-limit is the default of the rest.
func TestLimitsSet(t *testing.T) {
	ctx := context.Background()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	var out strings.Builder
	if err := run(ctx, []string{"platforms", "create", "--name", "acme", "--database-url", dbURL}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var created struct{ PlatformID string }
	if err := json.Unmarshal([]byte(out.String()), &created); err != nil || created.PlatformID == "" {
		t.Fatalf("platforms create: %v %s", err, out.String())
	}
	pid := created.PlatformID
	set := func(env, usd string) error {
		return run(ctx, []string{"limits", "set", "--platform", pid, "--env", env, "--daily-volume", usd, "--database-url", dbURL}, io.Discard, io.Discard)
	}
	if err := set("sandbox", "123456"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{"staging", "1"}, {"sandbox", "-5"}} {
		if err := set(bad[0], bad[1]); err == nil {
			t.Errorf("limits set %v accepted", bad)
		}
	}
	if err := run(ctx, []string{"limits", "set", "--platform", "Platform:nope", "--env", "sandbox", "--daily-volume", "1", "--database-url", dbURL}, io.Discard, io.Discard); err == nil {
		t.Error("limits set for an unknown platform accepted")
	}
	db, err := store.Open(ctx, dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sandbox, production := store.Tenant{PlatformID: pid, Env: store.EnvSandbox}, store.Tenant{PlatformID: pid, Env: store.EnvProduction}
	if v, ok, err := db.Read().DailyVolumeLimit(ctx, sandbox); err != nil || !ok || v != 123456 {
		t.Fatalf("sandbox limit %d %v %v", v, ok, err)
	}
	if _, ok, err := db.Read().DailyVolumeLimit(ctx, production); err != nil || ok {
		t.Fatalf("production has a limit of its own: %v %v", ok, err)
	}
	if s, err := parseServe([]string{"--daily-volume-limit", "777"}, io.Discard); err != nil || s.volumeLimit != 777 {
		t.Fatalf("--daily-volume-limit: %+v %v", s.volumeLimit, err)
	}
	if _, err := parseServe([]string{"--daily-volume-limit", "0"}, io.Discard); err == nil {
		t.Fatal("a zero default limit accepted")
	}
}

// R-CARD-04: the platform live-card maximum is configuration:
// --max-live-cards or $PAYMENTS_MAX_LIVE_CARDS, validated, reaching the
// node's options.
func TestParseServe_MaxLiveCards_R_CARD_04(t *testing.T) {
	t.Setenv("PAYMENTS_MAX_LIVE_CARDS", "")
	if s, err := parseServe(nil, io.Discard); err != nil || s.maxLiveCards != cards.DefaultMaxLiveCards {
		t.Fatalf("default %d (%v), want %d", s.maxLiveCards, err, cards.DefaultMaxLiveCards)
	}
	s, err := parseServe([]string{"--max-live-cards", "25"}, io.Discard)
	if err != nil || s.maxLiveCards != 25 || nodeOptions(s, "127.0.0.1:0").API.MaxLiveCards != 25 {
		t.Fatalf("--max-live-cards 25: %d %v", s.maxLiveCards, err)
	}
	t.Setenv("PAYMENTS_MAX_LIVE_CARDS", "7")
	if s, err := parseServe(nil, io.Discard); err != nil || s.maxLiveCards != 7 {
		t.Fatalf("$PAYMENTS_MAX_LIVE_CARDS 7: %d %v", s.maxLiveCards, err)
	}
	for _, bad := range []string{"0", "-3", "100000001"} {
		if _, err := parseServe([]string{"--max-live-cards", bad}, io.Discard); err == nil {
			t.Fatalf("--max-live-cards %s accepted", bad)
		}
	}
}
