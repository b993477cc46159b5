package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func TestIsPublic(t *testing.T) {
	public := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001:82a::200e",
		"64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1"}
	private := []string{"127.0.0.1", "127.8.9.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "0.0.0.0", "255.255.255.255", "224.0.0.1", "198.18.0.1", "192.0.2.10",
		"::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "64:ff9b::7f00:1", "::7f00:1", "::a9fe:a9fe",
		"2002:7f00:1::1", "2002:a9fe:a9fe::", "::ffff:169.254.169.254", "fd00:ec2::254", "0.1.2.3", "ff05::1:3"}
	for _, s := range public {
		if !isPublic(netip.MustParseAddr(s)) {
			t.Errorf("%s should be public", s)
		}
	}
	for _, s := range private {
		if isPublic(netip.MustParseAddr(s)) {
			t.Errorf("%s should not be public", s)
		}
	}
	if isPublic(netip.Addr{}) || isPublic(netip.MustParseAddr("fe80::1%eth0")) {
		t.Error("invalid and zoned addresses are not public")
	}
}

// fakeDNS answers every name with the given addresses.
func fakeDNS(addrs ...string) func(context.Context, string, string) ([]netip.Addr, error) {
	return func(context.Context, string, string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

// Production: https only. Public-only policies: no name or literal that
// reaches a non-public address. Open policies: any address.
func TestPolicy_CheckURL(t *testing.T) {
	prod := policy{httpsOnly: true, publicOnly: true, lookupNetIPs: fakeDNS("93.184.216.34")}
	rebinding := prod
	rebinding.lookupNetIPs = fakeDNS("93.184.216.34", "10.0.0.7") // one bad answer is enough
	open := policy{httpsOnly: true, lookupNetIPs: fakeDNS("10.0.0.7")}
	sandboxStrict := policy{publicOnly: true, lookupNetIPs: fakeDNS("127.0.0.1")}
	sandboxOpen := policy{}
	cases := []struct {
		p    policy
		url  string
		ok   bool
		want string
	}{
		{prod, "https://hooks.example.com/x", true, ""},
		{prod, "http://hooks.example.com/x", false, "https"},
		{prod, "https://127.0.0.1/x", false, "not a public address"},
		{prod, "https://[::1]:8443/x", false, "not a public address"},
		{prod, "https://[::ffff:127.0.0.1]/x", false, "not a public address"},
		{prod, "https://169.254.169.254/latest/meta-data", false, "not a public address"},
		{prod, "https://93.184.216.34/x", true, ""},
		{rebinding, "https://hooks.example.com/x", false, "resolves to 10.0.0.7"},
		{prod, "ftp://hooks.example.com/x", false, "https"},
		{prod, "/relative", false, "absolute"},
		{open, "https://internal.corp/x", true, ""},
		{open, "https://127.0.0.1/x", true, ""},
		{open, "http://internal.corp/x", false, "https"},
		{sandboxStrict, "http://127.0.0.1:9000/x", false, "not a public address"},
		{sandboxStrict, "http://localhost:9000/x", false, "resolves to 127.0.0.1"},
		{sandboxStrict, "http://0.0.0.0:9000/x", false, "not a public address"},
		{sandboxStrict, "http://[fe80::1]/x", false, "not a public address"},
		{sandboxStrict, "http://224.0.0.1/x", false, "not a public address"},
		{sandboxStrict, "http://93.184.216.34/x", true, ""},
		{sandboxOpen, "http://127.0.0.1:9/x", true, ""},
		{sandboxOpen, "http://localhost/x", true, ""},
	}
	for _, c := range cases {
		_, err := c.p.checkURL(ctx, c.url)
		if c.ok != (err == nil) || (err != nil && (!strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrUnsafeEndpoint))) {
			t.Errorf("%s (httpsOnly=%v publicOnly=%v): %v", c.url, c.p.httpsOnly, c.p.publicOnly, err)
		}
	}
}

// The setting, and auto's laptop rule: any address while a SQLite
// installation serves one platform; public ones only once it serves two,
// and always on PostgreSQL.
func TestGuard_Settings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		loop := "http://127.0.0.1:9000/hooks"
		check := func(g *Guard, env string) error { return g.CheckEndpoint(ctx, env, loop) }
		newTenant(t, db, store.EnvSandbox, "")
		auto := NewGuard(db, 0)
		if auto.Setting() != AddressesAuto {
			t.Fatalf("zero setting is %v", auto.Setting())
		}
		err := check(auto, store.EnvSandbox)
		if db.Engine() == store.SQLite && err != nil {
			t.Fatalf("laptop (SQLite, one platform): %v", err)
		}
		if db.Engine() == store.Postgres && (!errors.Is(err, ErrUnsafeEndpoint) || !strings.Contains(err.Error(), "PostgreSQL")) {
			t.Fatalf("auto on PostgreSQL: %v", err)
		}
		if err := check(NewGuard(db, AddressesPublic), store.EnvSandbox); !errors.Is(err, ErrUnsafeEndpoint) {
			t.Fatalf("public only: %v", err)
		}
		if err := check(NewGuard(db, AddressesAny), store.EnvSandbox); err != nil {
			t.Fatalf("any: %v", err)
		}
		if err := NewGuard(db, AddressesAny).CheckEndpoint(ctx, store.EnvProduction, loop); !errors.Is(err, ErrUnsafeEndpoint) ||
			!strings.Contains(err.Error(), "https") {
			t.Fatalf("any, production http: %v", err)
		}
		newTenant(t, db, store.EnvSandbox, "")
		err = check(NewGuard(db, AddressesAuto), store.EnvSandbox)
		if !errors.Is(err, ErrUnsafeEndpoint) || (db.Engine() == store.SQLite && !strings.Contains(err.Error(), "serves 2 platforms")) {
			t.Fatalf("auto with two platforms: %v", err)
		}
	})
}

func TestParseAddresses(t *testing.T) {
	for in, want := range map[string]Addresses{"": AddressesAuto, "auto": AddressesAuto, "true": AddressesAny,
		"FALSE": AddressesPublic, "1": AddressesAny, "0": AddressesPublic} {
		if got, err := ParseAddresses(in); err != nil || got != want {
			t.Errorf("ParseAddresses(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseAddresses("yes please"); err == nil {
		t.Error("nonsense accepted")
	}
}

// The dialer refuses a non-public address even when the pre-check was
// passed (DNS may answer differently at dial time): here the client is used
// directly on a loopback server, by address and by a name that resolves to
// loopback.
func TestClient_DialTimeCheck(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, url := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := newClient(strictDial, time.Second, pool, 1).Get(url)
		if !errors.Is(err, ErrUnsafeEndpoint) {
			t.Fatalf("%s: strict client reached loopback: %v", url, err)
		}
	}
	resp, err := newClient(policy{}, time.Second, pool, 1).Get(srv.URL)
	if err != nil {
		t.Fatalf("with private addresses allowed: %v", err)
	}
	resp.Body.Close()
}

// Redirects are not followed: a 3xx is the receiver's answer, not 2xx.
func TestClient_NoRedirects(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("redirect followed") }))
	defer target.Close()
	srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer srv.Close()
	resp, err := newClient(policy{}, time.Second, nil, 1).Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// secretService is an internal service on loopback whose answer must never
// be shown to a platform.
func secretService(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"internal":"admin-password"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// A platform on a public-only installation points its endpoint at a name
// that resolved to a public address when it was checked but resolves to
// loopback when dialled ("localhost", as DNS rebinding would): the dialer
// refuses, nothing reaches the internal service, and neither the test
// webhook's error nor the recorded attempt carries its body.
func TestDelivery_DialTimeRefusal_Rebinding(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv, hits := secretService(t)
		endpoint := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/hook"
		g := NewGuard(db, AddressesPublic)
		g.lookup = fakeDNS("93.184.216.34") // the answer at check time
		if err := g.CheckEndpoint(ctx, store.EnvSandbox, endpoint); err != nil {
			t.Fatalf("pre-check: %v", err)
		}
		tn := newTenant(t, db, store.EnvSandbox, endpoint)
		svc := NewService(db, nil, ServiceOptions{RequestTimeout: 2 * time.Second, Guard: g})
		_, err := svc.SendTest(ctx, tn)
		if code(err) != "WEBHOOK_DELIVERY_ERROR" || strings.Contains(fmt.Sprint(err, details(err)), "admin-password") {
			t.Fatalf("test webhook: %v %v", err, details(err))
		}
		if !strings.Contains(fmt.Sprint(details(err)), "not a public address") {
			t.Fatalf("the refusal does not say why: %v", details(err))
		}
		if hits.Load() != 0 {
			t.Fatalf("the internal service got %d requests", hits.Load())
		}
		evs, _, err := svc.ListEvents(ctx, tn, store.EventFilter{}, "", 10)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events %v %v", evs, err)
		}
		d, err := svc.GetEvent(ctx, tn, evs[0].ID)
		if err != nil || len(d.Attempts) != 1 {
			t.Fatalf("attempts %+v %v", d, err)
		}
		if a := d.Attempts[0]; a.ResponseStatus != nil || a.ResponseExcerpt != "" || !strings.Contains(a.Error, "not a public address") {
			t.Fatalf("attempt %+v", a)
		}
	})
}

// An allowed receiver redirects to an internal address: the redirect is
// not followed (the internal service gets nothing) and the attempt is a
// failure. Here "allowed" is one loopback port, standing in for a public
// receiver.
func TestDelivery_RedirectToLoopback(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		internal, hits := secretService(t)
		redirector := httptest.NewServer(http.RedirectHandler(internal.URL+"/admin", http.StatusTemporaryRedirect))
		defer redirector.Close()
		allowedPort := netip.MustParseAddrPort(redirector.Listener.Addr().String()).Port()
		g := NewGuard(db, AddressesPublic)
		g.lookup = fakeDNS("93.184.216.34")
		s := newSender(db, slog.New(slog.DiscardHandler), time.Second, g, nil, 1)
		s.strict = newClient(policy{publicOnly: true, allowed: func(ap netip.AddrPort) bool { return ap.Port() == allowedPort }},
			time.Second, nil, 1)
		endpoint := strings.Replace(redirector.URL, "127.0.0.1", "localhost", 1) + "/hook"
		tn := newTenant(t, db, store.EnvSandbox, endpoint)
		ev := emit(t, db, tn, "TEST")
		o := s.send(ctx, tn, ev.ID, []byte(`{}`))
		if o.Status != http.StatusTemporaryRedirect || o.delivered() || hits.Load() != 0 || strings.Contains(o.Excerpt, "admin-password") {
			t.Fatalf("outcome %+v, internal hits %d", o, hits.Load())
		}
		// And the internal address itself, as the endpoint, is refused
		// before any request.
		setEndpoint(t, db, tn, internal.URL+"/admin")
		if o := s.send(ctx, tn, ev.ID, []byte(`{}`)); o.Status != 0 || !strings.Contains(o.Err, "not a public address") || hits.Load() != 0 {
			t.Fatalf("direct: %+v", o)
		}
	})
}

// End to end through a runner: under the public-only setting a production
// tenant whose endpoint is on loopback gets no request (the attempt records
// why, and the delivery is retried later); with any address allowed it is
// delivered. In laptop mode (auto, SQLite, one platform) a sandbox tenant
// reaches a plain-http receiver on loopback, as in the README quickstart.
func TestDelivery_AddressRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		rc := newReceiver(t, nil)
		if db.Engine() == store.SQLite {
			laptop := newTenant(t, db, store.EnvSandbox, rc.URL("/plain-http"))
			ev := emit(t, db, laptop, "TEST")
			opts := testOptions()
			opts.Addresses = AddressesAuto
			stop := start(t, NewRunner(db, nil, opts))
			drive(t, c, 0, func() bool { return rc.delivered()[ev.ID] })
			stop()
		}

		var hits atomic.Int32
		tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer tls.Close()
		pool := tls.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

		prod := newTenant(t, db, store.EnvProduction, tls.URL+"/hook")
		ev := emit(t, db, prod, "TEST")
		strict := testOptions()
		strict.RootCAs, strict.Addresses = pool, AddressesPublic
		stop := start(t, NewRunner(db, nil, strict))
		drive(t, c, 0, func() bool { return len(attempts(t, db, prod, ev.ID)) == 1 })
		stop()
		a := attempts(t, db, prod, ev.ID)[0]
		if hits.Load() != 0 || a.StatusCode != 0 || a.ResponseExcerpt != "" || !strings.Contains(a.Error, "not a public address") {
			t.Fatalf("production delivery to loopback: hits=%d attempt=%+v", hits.Load(), a)
		}
		if d := delivery(t, db, prod, ev.ID); d.State != store.DeliveryPending || !d.NextAttemptAt.After(c.Now()) {
			t.Fatalf("a refused endpoint is retried later (the platform may fix it): %+v", d)
		}

		allowed := strict
		allowed.Addresses = AddressesAny
		start(t, NewRunner(db, nil, allowed))
		drive(t, c, time.Minute, func() bool { return delivery(t, db, prod, ev.ID).State == store.DeliveryDelivered })
		if hits.Load() != 1 {
			t.Fatalf("hits %d", hits.Load())
		}
	})
}

func details(err error) map[string]any {
	if e, ok := apierr.From(err); ok {
		return e.Details
	}
	return nil
}

// peerPublic classifies the address a delivery reached.
func TestPeerPublic(t *testing.T) {
	for addr, want := range map[string]bool{"93.184.216.34:443": true, "[2606:2800:220:1::1]:443": true,
		"127.0.0.1:80": false, "10.1.2.3:443": false, "169.254.169.254:80": false, "[::1]:80": false,
		"[::ffff:192.168.1.1]:80": false, "[::ffff:93.184.216.34]:443": true} {
		if got := peerPublic(net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
	if peerPublic(nil) {
		t.Error("no address is public")
	}
}

// A body read from a loopback receiver while any address was allowed is
// recorded with its peer; GET /events/{id} shows it while private
// addresses are allowed and withholds it once they are not. Attempts
// recorded before the peer was (peer_public 0) are withheld the same way;
// an answer from a public address is always shown.
func TestGetEvent_WithholdsPrivateExcerpts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv, hits := secretService(t)
		tn := newTenant(t, db, store.EnvSandbox, srv.URL+"/hook")
		ev := emit(t, db, tn, "TEST")
		laptop := NewGuard(db, AddressesAny)
		o := newSender(db, slog.New(slog.DiscardHandler), time.Second, laptop, nil, 1).send(ctx, tn, ev.ID, []byte(`{}`))
		if hits.Load() != 1 || o.PeerPublic || !strings.Contains(o.Excerpt, "admin-password") {
			t.Fatalf("outcome %+v, hits %d", o, hits.Load())
		}
		if _, err := record(ctx, db, testOptions().Backoff, []finished{{claim: store.Claim{Delivery: store.Delivery{EventID: ev.ID, Tenant: tn}}, out: o}}, nil); err != nil {
			t.Fatal(err)
		}
		public := store.Attempt{ID: "WebhookAttempt:public", EventID: ev.ID, Tenant: tn, AttemptedAt: db.Now(), URL: "https://hooks.example.com/x",
			StatusCode: 500, ResponseExcerpt: "public answer", PeerPublic: true}
		if err := db.Write().InsertAttempts(ctx, []store.Attempt{public}); err != nil {
			t.Fatal(err)
		}
		excerpts := func(g *Guard) []string {
			d, err := NewService(db, nil, ServiceOptions{Guard: g}).GetEvent(ctx, tn, ev.ID)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, a := range d.Attempts {
				out = append(out, a.ResponseExcerpt)
			}
			return out
		}
		if got := excerpts(laptop); len(got) != 2 || !strings.Contains(got[0]+got[1], "admin-password") {
			t.Fatalf("private addresses allowed: %q", got)
		}
		got := excerpts(NewGuard(db, AddressesPublic))
		if len(got) != 2 || strings.Contains(got[0]+got[1], "admin-password") || !strings.Contains(got[0]+got[1], "public answer") {
			t.Fatalf("public only: %q", got)
		}
	})
}
