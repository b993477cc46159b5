package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// Issue 16 item 4. On an installation whose webhook endpoints may reach
// public addresses only, PATCH /config refuses every endpoint that reaches
// this host, a private network, link-local (cloud metadata), unspecified or
// multicast space, in IPv4 and IPv6 and their mapped forms, by address or
// by a name that resolves there; the configuration stays as it was.
func TestConfig_WebhookEndpoint_RefusesInternalAddresses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{WebhookAddresses: webhooks.AddressesPublic})
		refused := []string{
			"http://127.0.0.1:9000/hooks", "http://localhost:9000/hooks", "http://[::1]/x", "http://[::ffff:127.0.0.1]/x",
			"http://[::ffff:7f00:1]/x", "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/x",
			"http://10.1.2.3/x", "http://172.16.0.1/x", "http://192.168.1.1/x", "http://100.64.0.1/x", "http://0.0.0.0:8080/x",
			"http://[::]/x", "http://[fe80::1]/x", "http://[fc00::1]/x", "http://224.0.0.1/x", "http://[ff02::1]/x",
			"http://[64:ff9b::a9fe:a9fe]/x", "http://[2002:7f00:1::]/x",
		}
		before := e.snapshot()
		for _, u := range refused {
			for _, creds := range []string{e.sandbox, e.production} {
				if creds == e.production {
					u = strings.Replace(u, "http://", "https://", 1)
				}
				r := e.do("PATCH", "/config", map[string]any{"webhookEndpoint": u}, withCreds(creds))
				expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
				if fieldErrors(t, r)["webhookEndpoint"] != "format" || !strings.Contains(string(r.Body), "not a public address") {
					t.Fatalf("%s: %s", u, r.Body)
				}
			}
		}
		if e.snapshot() != before {
			t.Fatal("a refused endpoint changed the configuration")
		}
		expect(t, e.do("PATCH", "/config", `{"webhookEndpoint":"http://93.184.216.34/hooks"}`), http.StatusOK, "")
		expect(t, e.do("PATCH", "/config", `{"webhookEndpoint":"https://93.184.216.34/hooks"}`, withCreds(e.production)), http.StatusOK, "")
	})
}

// The default setting (auto) on a laptop: the README quickstart's endpoint
// on 127.0.0.1 is accepted while a SQLite installation serves one platform;
// on PostgreSQL, or once a second platform exists, it is refused.
func TestConfig_WebhookEndpoint_LaptopMode(t *testing.T) {
	quickstart := `{"webhookEndpoint":"http://127.0.0.1:9000/hooks","cardConfigs":{"maxSpendPerDay":50000}}`
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{WebhookAddresses: webhooks.AddressesAuto})
		r := e.do("PATCH", "/config", quickstart)
		if db.Engine() == store.SQLite {
			expect(t, r, http.StatusOK, "")
		} else {
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		}
	})
	t.Run("sqlite with two platforms", func(t *testing.T) {
		db := storetest.OpenSQLite(t)
		e := newEnv(t, db, Options{WebhookAddresses: webhooks.AddressesAuto})
		if _, err := platforms.Create(context.Background(), db, "Other", false); err != nil {
			t.Fatal(err)
		}
		r := e.do("PATCH", "/config", quickstart)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(string(r.Body), "serves 2 platforms") {
			t.Fatalf("the refusal does not say why: %s", r.Body)
		}
	})
}

// An endpoint stored while private addresses were allowed, after a restart
// with public addresses only: POST /sandbox/webhooks/test reaches nothing
// and shows no body, and neither does the attempt in GET /events/{id}.
func TestSandboxWebhookTest_NoBodyFromInternalAddress(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		var hits atomic.Int32
		internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Write([]byte(`{"internal":"admin-password"}`))
		}))
		defer internal.Close()
		e.setWebhookEndpoint(t, strings.Replace(internal.URL, "127.0.0.1", "localhost", 1)+"/hook")
		strict, err := New(context.Background(), e.db, nil, Options{RateLimit: -1, WebhookAddresses: webhooks.AddressesPublic})
		if err != nil {
			t.Fatal(err)
		}
		e.srv = strict
		r := e.do("POST", "/sandbox/webhooks/test", nil)
		expect(t, r, http.StatusBadRequest, "WEBHOOK_DELIVERY_ERROR") // R-ERR-07: this code is a 400
		if strings.Contains(string(r.Body), "admin-password") || !strings.Contains(string(r.Body), "not a public address") {
			t.Fatalf("test webhook: %s", r.Body)
		}
		list := e.do("GET", "/events?limit=100", nil).JSON(t)["data"].([]any)
		ev := list[len(list)-1].(map[string]any)
		d := e.do("GET", "/events/"+ev["id"].(string), nil)
		if strings.Contains(string(d.Body), "admin-password") || !strings.Contains(string(d.Body), "not a public address") {
			t.Fatalf("event: %s", d.Body)
		}
		if hits.Load() != 0 {
			t.Fatalf("the internal service got %d requests", hits.Load())
		}
	})
}
