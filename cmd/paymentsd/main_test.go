package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

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

// PostgreSQL group commit is off unless asked for (docs/benchmarks.md).
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
