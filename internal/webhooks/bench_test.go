package webhooks

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// BenchmarkDeliver measures one node's delivery throughput with default
// Options: benchEvents events are queued, then a runner delivers them to a
// receiver on loopback that answers 200 at once, and the clock stops when
// the last delivery is recorded DELIVERED. It reports deliveries/s, and
// needs nothing but the package's public API, so the same file measures
// older versions of the runner too.
//
//	PAYMENTS_TEST_POSTGRES_URL=postgres://… go test -run '^$' -bench Deliver -benchtime 3x ./internal/webhooks/
func BenchmarkDeliver(b *testing.B) {
	const benchEvents = 5000
	engines := []string{"sqlite"}
	if os.Getenv(storetest.PostgresEnv) != "" {
		engines = append(engines, "postgres")
	}
	for _, engine := range engines {
		for _, tenants := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/tenants=%d", engine, tenants), func(b *testing.B) {
				db, raw := benchOpen(b, engine)
				var ok atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					ok.Add(1)
					w.WriteHeader(http.StatusOK)
				}))
				b.Cleanup(srv.Close)
				var ts []store.Tenant
				for range tenants {
					ts = append(ts, benchTenant(b, db, srv.URL+"/hook"))
				}
				var elapsed time.Duration
				for range b.N {
					benchEmit(b, db, ts, benchEvents)
					rctx, cancel := context.WithCancel(context.Background())
					done := make(chan struct{})
					began := time.Now()
					go func() { Run(rctx, db, nil, Options{}); close(done) }()
					benchWaitDelivered(b, raw)
					elapsed += time.Since(began)
					cancel()
					<-done
				}
				b.ReportMetric(float64(b.N*benchEvents)/elapsed.Seconds(), "deliveries/s")
				b.ReportMetric(float64(ok.Load())/float64(b.N*benchEvents), "requests/delivery")
			})
		}
	}
}

// benchOpen opens a migrated store, and a plain connection to the same
// database for counting what is left to deliver.
func benchOpen(b *testing.B, engine string) (*store.DB, *sql.DB) {
	b.Helper()
	if engine == "sqlite" {
		path := filepath.Join(b.TempDir(), "bench.db")
		db, err := store.Open(context.Background(), "sqlite:"+path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { raw.Close() })
		return db, raw
	}
	base := os.Getenv(storetest.PostgresEnv)
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	schema := "bench_" + hex.EncodeToString(buf)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	qs := u.Query()
	qs.Set("search_path", schema)
	u.RawQuery = qs.Encode()
	db, err := store.Open(context.Background(), u.String(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	raw, err := sql.Open("pgx", u.String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { raw.Close() })
	return db, raw
}

func benchTenant(b *testing.B, db *store.DB, endpoint string) store.Tenant {
	b.Helper()
	c, err := platforms.Create(context.Background(), db, "p", false)
	if err != nil {
		b.Fatal(err)
	}
	tn := store.Tenant{PlatformID: c.PlatformID, Env: store.EnvSandbox}
	p := platformconfig.Patch{WebhookEndpoint: jsonx.Optional[string]{Set: true, Value: endpoint}}
	if _, err := (&platformconfig.Service{DB: db}).Update(context.Background(), tn, p); err != nil {
		b.Fatal(err)
	}
	return tn
}

// benchEmit queues n events, spread over the tenants in turn, as a stream
// of transfers would.
func benchEmit(b *testing.B, db *store.DB, ts []store.Tenant, n int) {
	b.Helper()
	data := map[string]any{"id": "Transaction:019a0000-0000-7000-8000-000000000000", "status": "COMPLETED",
		"sentAmount": map[string]any{"amount": 12345, "currency": map[string]any{"code": "USD", "decimals": 2}}}
	for i := 0; i < n; i += 500 {
		err := db.InTx(context.Background(), func(tx *store.Tx) error {
			for j := i; j < min(i+500, n); j++ {
				if _, err := events.Emit(context.Background(), tx, ts[j%len(ts)], "OUTGOING_PAYMENT.COMPLETED", "Transaction:1", data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// benchWaitDelivered returns once no delivery is PENDING (every one is
// recorded), or fails after five minutes.
func benchWaitDelivered(b *testing.B, raw *sql.DB) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var n int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'PENDING'`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d deliveries still pending after five minutes", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
