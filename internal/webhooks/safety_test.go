package webhooks

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func TestIsPublic(t *testing.T) {
	public := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001:82a::200e",
		"64:ff9b::808:808", "::ffff:8.8.8.8"}
	private := []string{"127.0.0.1", "127.8.9.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "0.0.0.0", "255.255.255.255", "224.0.0.1", "198.18.0.1", "192.0.2.10",
		"::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "64:ff9b::7f00:1"}
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

// Production: https only, and no name or literal that reaches a non-public
// address, unless private addresses are allowed. Sandbox: anything.
func TestPolicy_CheckURL(t *testing.T) {
	prod := productionPolicy(false)
	prod.lookupNetIPs = fakeDNS("93.184.216.34")
	rebinding := productionPolicy(false)
	rebinding.lookupNetIPs = fakeDNS("93.184.216.34", "10.0.0.7") // one bad answer is enough
	open := productionPolicy(true)
	open.lookupNetIPs = fakeDNS("10.0.0.7")
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
		{prod, "https://169.254.169.254/latest/meta-data", false, "not a public address"},
		{prod, "https://93.184.216.34/x", true, ""},
		{rebinding, "https://hooks.example.com/x", false, "resolves to 10.0.0.7"},
		{prod, "ftp://hooks.example.com/x", false, "https"},
		{prod, "/relative", false, "absolute"},
		{open, "https://internal.corp/x", true, ""},
		{open, "https://127.0.0.1/x", true, ""},
		{open, "http://internal.corp/x", false, "https"},
		{sandboxPolicy, "http://127.0.0.1:9/x", true, ""},
		{sandboxPolicy, "http://localhost/x", true, ""},
	}
	for _, c := range cases {
		_, err := c.p.checkURL(ctx, c.url)
		if c.ok != (err == nil) || (err != nil && (!strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrUnsafeEndpoint))) {
			t.Errorf("%s (httpsOnly=%v publicOnly=%v): %v", c.url, c.p.httpsOnly, c.p.publicOnly, err)
		}
	}
}

// The dialer refuses a non-public address even when the pre-check was
// passed (DNS may answer differently at dial time): here the client is used
// directly on a loopback server.
func TestClient_DialTimeCheck(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, url := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := newClient(productionPolicy(false), time.Second, pool, 1).Get(url)
		if !errors.Is(err, ErrUnsafeEndpoint) {
			t.Fatalf("%s: production client reached loopback: %v", url, err)
		}
	}
	resp, err := newClient(productionPolicy(true), time.Second, pool, 1).Get(srv.URL)
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
	resp, err := newClient(sandboxPolicy, time.Second, nil, 1).Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// End to end through a runner: a production tenant whose endpoint is on
// loopback gets no request (the attempt records why); with AllowPrivate it
// is delivered; a sandbox tenant may use plain http on loopback.
func TestDelivery_ProductionAddressRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		var hits atomic.Int32
		tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer tls.Close()
		pool := tls.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

		prod := newTenant(t, db, store.EnvProduction, tls.URL+"/hook")
		ev := emit(t, db, prod, "TEST")
		strict := testOptions()
		strict.RootCAs = pool
		stop := start(t, NewRunner(db, nil, strict))
		drive(t, c, 0, func() bool { return len(attempts(t, db, prod, ev.ID)) == 1 })
		stop()
		a := attempts(t, db, prod, ev.ID)[0]
		if hits.Load() != 0 || a.StatusCode != 0 || !strings.Contains(a.Error, "not a public address") {
			t.Fatalf("production delivery to loopback: hits=%d attempt=%+v", hits.Load(), a)
		}
		if d := delivery(t, db, prod, ev.ID); d.State != store.DeliveryPending || !d.NextAttemptAt.After(c.Now()) {
			t.Fatalf("a refused endpoint is retried later (the platform may fix it): %+v", d)
		}

		allowed := strict
		allowed.AllowPrivate = true
		start(t, NewRunner(db, nil, allowed))
		drive(t, c, time.Minute, func() bool { return delivery(t, db, prod, ev.ID).State == store.DeliveryDelivered })
		if hits.Load() != 1 {
			t.Fatalf("hits %d", hits.Load())
		}

		rc := newReceiver(t, nil)
		sb := newTenant(t, db, store.EnvSandbox, rc.URL("/plain-http"))
		ev2 := emit(t, db, sb, "TEST")
		drive(t, c, 0, func() bool { return rc.delivered()[ev2.ID] })
	})
}
