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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/keyring"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// BenchmarkDeliver measures one node's delivery throughput with default
// Options: benchEvents events are queued, then a runner delivers them to a
// receiver on loopback that answers 200 at once, and the clock stops when
// the last delivery is recorded DELIVERED. It reports deliveries/s and the
// CPU time this process spent per delivery (runner, receiver and, on
// SQLite, the database; it depends less than throughput on what else the
// machine runs); on PostgreSQL, which runs it in a database of its own
// (analyzed once the events are queued), also the database's busy time
// (pg_stat_database.active_time) and transactions per delivery.
// It needs nothing but the package's public API, so the same file measures
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
				target, stats := benchDatabase(b, engine)
				var ok atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					ok.Add(1)
					w.WriteHeader(http.StatusOK)
				}))
				b.Cleanup(srv.Close)
				var ts []store.Tenant
				benchWith(b, target, func(db *store.DB) {
					for range tenants {
						ts = append(ts, benchTenant(b, db, srv.URL+"/hook"))
					}
				})
				var elapsed, cpu time.Duration
				var cost benchStats
				for range b.N {
					benchWith(b, target, func(db *store.DB) { benchEmit(b, db, ts, benchEvents) })
					if engine == "postgres" {
						benchAnalyze(b, target)
					}
					before := stats()
					ok.Store(0)
					benchWith(b, target, func(db *store.DB) {
						rctx, cancel := context.WithCancel(context.Background())
						done := make(chan struct{})
						began, cpuBefore := time.Now(), processCPU()
						go func() { Run(rctx, db, nil, Options{Addresses: AddressesAny}); close(done) }()
						benchWaitDelivered(b, target, &ok, benchEvents)
						elapsed += time.Since(began)
						cpu += processCPU() - cpuBefore
						cancel()
						<-done
					})
					cost = cost.add(stats().sub(before))
				}
				n := float64(b.N * benchEvents)
				b.ReportMetric(n/elapsed.Seconds(), "deliveries/s")
				b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/delivery")
				if engine == "postgres" {
					b.ReportMetric(cost.activeMS*1000/n, "db-µs/delivery")
					b.ReportMetric(float64(cost.xacts)/n, "xacts/delivery")
				}
			})
		}
	}
}

// benchStats are a PostgreSQL database's counters.
type benchStats struct {
	activeMS float64 // time spent executing statements
	xacts    int64   // committed transactions, single statements included
}

func (s benchStats) sub(o benchStats) benchStats {
	return benchStats{s.activeMS - o.activeMS, s.xacts - o.xacts}
}

func (s benchStats) add(o benchStats) benchStats {
	return benchStats{s.activeMS + o.activeMS, s.xacts + o.xacts}
}

// benchDatabase makes an empty database and returns its URL, and a function
// that reads its counters once no one is connected (a backend flushes its
// counters when it exits). SQLite has no counters.
func benchDatabase(b *testing.B, engine string) (string, func() benchStats) {
	b.Helper()
	if engine == "sqlite" {
		return "sqlite:" + filepath.Join(b.TempDir(), "bench.db"), func() benchStats { return benchStats{} }
	}
	base := os.Getenv(storetest.PostgresEnv)
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	name := "bench_" + hex.EncodeToString(buf)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := admin.Exec("CREATE DATABASE " + name + " TEMPLATE template0"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	return u.String(), func() benchStats {
		deadline := time.Now().Add(30 * time.Second)
		for {
			var n int
			if err := admin.QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d connections to %s stay open", n, name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		var s benchStats
		if err := admin.QueryRow(`SELECT active_time, xact_commit FROM pg_stat_database WHERE datname = $1`,
			name).Scan(&s.activeMS, &s.xacts); err != nil {
			b.Fatal(err)
		}
		return s
	}
}

// benchAnalyze gives PostgreSQL statistics on the fresh backlog, as
// autovacuum would have on a database in service. A table never analyzed
// looks nearly empty to the planner, which then sorts the whole backlog
// (before and after this change alike) instead of reading the due index in
// order.
func benchAnalyze(b *testing.B, target string) {
	b.Helper()
	raw, err := sql.Open("pgx", target)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// benchWith opens the store at target for fn, and closes it.
func benchWith(b *testing.B, target string, fn func(db *store.DB)) {
	b.Helper()
	k, err := keyring.Generate("bench")
	if err != nil {
		b.Fatal(err)
	}
	kr, err := keyring.New(k)
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(context.Background(), target, store.Options{Keyring: kr})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	fn(db)
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

// benchWaitDelivered returns once the receiver has answered n requests and
// no delivery is PENDING any more (every outcome is written), or fails after
// five minutes. The database is polled only at the end, so that the
// polling costs it little.
func benchWaitDelivered(b *testing.B, target string, ok *atomic.Int64, n int64) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for ok.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d delivered after five minutes", ok.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
	driver, dsn := "pgx", target
	if path, isSQLite := strings.CutPrefix(target, "sqlite:"); isSQLite {
		driver, dsn = "sqlite", "file:"+path+"?_pragma=busy_timeout(10000)"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for {
		var pending int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'PENDING'`).Scan(&pending); err != nil {
			b.Fatal(err)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d deliveries still pending after five minutes", pending)
		}
		time.Sleep(time.Millisecond)
	}
}
