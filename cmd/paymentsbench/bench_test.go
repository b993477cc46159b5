package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, ms(i))
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, ms(50)}, {95, ms(95)}, {99, ms(99)}, {100, ms(100)}, {0, ms(1)}, {0.5, ms(1)}, {99.9, ms(100)}} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty: want 0")
	}
	if got := Percentile([]time.Duration{ms(7)}, 99); got != ms(7) {
		t.Errorf("single: %v", got)
	}
	// Nearest rank on a small set: p50 of 1..4 is 2, p95 is 4.
	small := []time.Duration{ms(1), ms(2), ms(3), ms(4)}
	if Percentile(small, 50) != ms(2) || Percentile(small, 95) != ms(4) {
		t.Errorf("small: p50 %v p95 %v", Percentile(small, 50), Percentile(small, 95))
	}
}

func TestSummariseSortsAndRounds(t *testing.T) {
	l := Summarise([]time.Duration{ms(3), ms(1), 2*time.Millisecond + 500*time.Microsecond, ms(4)})
	want := Latency{Count: 4, P50: 2.5, P95: 4, P99: 4, Max: 4, Mean: 2.625}
	if l != want {
		t.Fatalf("got %+v, want %+v", l, want)
	}
	if (Summarise(nil) != Latency{}) {
		t.Fatal("empty summary")
	}
}

func sampleReport() *Report {
	return &Report{Engine: "sqlite", Concurrency: 8, Duration: 10, Customers: 20, Attempted: 1002, Acked: 1000, Retries: 3,
		Throughput: 100, Latency: Latency{Count: 1000, P50: 1.5, P95: 3, P99: 4.25, Max: 9, Mean: 1.75},
		Errors: map[string]int{"INSUFFICIENT_FUNDS": 2, "A_CODE": 1}, PeakRSS: 100 << 20, PeakRSSFrom: "VmHWM", Kills: 21,
		Timeline: []float64{99.6, 100.4}, WebhooksReceived: 3990, WebhooksPending: 12,
		Compare:   []Comparison{{Name: "pgbench", TPS: 50, Ratio: 2, MachineMs: 0.75}},
		CPU:       &CPUPerTransfer{MachineMs: 5.5, ServerMs: 2.25, PostgresMs: 2.5, ToolMs: 0.5, OtherMs: 0.25, BusyCores: 1.9},
		Committer: &Committer{Commits: 400, RequestsPerCommit: 2.5, Workers: 2, Busy: 0.915, BusyMsPerTransfer: 1.83},
		Payouts:   40, PayoutsFailing: 1, CrossCurrency: 30,
		Checks: []CheckResult{{Name: "ok one", Pass: true}, {Name: "bad one", Detail: "3 things"}}}
}

func TestReportText(t *testing.T) {
	var b bytes.Buffer
	r := sampleReport()
	r.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		"engine sqlite, concurrency 8, 10.0s, 20 customers",
		"transfers: 1002 attempted, 1000 acknowledged, 3 retries, 0 unresolved",
		"throughput: 100.0 acknowledged transfers/s",
		"latency ms: p50 1.50  p95 3.00  p99 4.25  max 9.00  mean 1.75 (n=1000)",
		"errors: A_CODE=1 INSUFFICIENT_FUNDS=2",
		"throughput every 5 s: 100 100",
		"server peak RSS: 100.0 MiB (VmHWM)",
		"webhooks: 3990 received during the load (3.99 per acknowledged transfer); at its end 12 pending in the database",
		"crash mode: 21 SIGKILLs",
		"compare pgbench: 50.0 tps; ours/theirs = 2.00; 0.75 ms of machine CPU per transaction",
		"group committer: 400 commits, 2.50 requests per commit; 2 worker(s), busy 92% of the load (1.83 ms per transfer)",
		"cpu per transfer: 5.50 ms on the machine (1.90 of its cores busy): server 2.25, postgres 2.50, this tool 0.50, other 0.25",
		"cross-currency (USD to EUR): 30 of the acknowledged",
		"payouts (USD to external bank accounts): 40 of the acknowledged, 1 of them failed or returned by magic amounts",
		"PASS ok one\n",
		"FAIL bad one: 3 things\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if !r.Failed() {
		t.Error("a failed check must fail the report")
	}
	r.Checks = r.Checks[:1]
	if r.Failed() {
		t.Error("passing checks only")
	}
}

// The receiver counts what it is sent.
func TestWebhookSinkCounts(t *testing.T) {
	url, received, stop, err := webhookSink(stall{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for range 3 {
		resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if n := received(); n != 3 {
		t.Fatalf("received %d, want 3", n)
	}
}

// A hiccup holds the answers that arrive in it until its end, and only those.
func TestStallWait(t *testing.T) {
	ms := time.Millisecond
	st := stall{Every: 10 * time.Second, For: 300 * ms}
	for _, tc := range []struct {
		elapsed, want time.Duration
	}{
		{0, 300 * ms},
		{100 * ms, 200 * ms},
		{300 * ms, 0},
		{5 * time.Second, 0},
		{10*time.Second + 299*ms, 1 * ms},
		{10*time.Second + 300*ms, 0},
	} {
		if got := st.wait(tc.elapsed); got != tc.want {
			t.Errorf("wait(%v) = %v, want %v", tc.elapsed, got, tc.want)
		}
	}
	if got := (stall{For: 300 * ms}).wait(0); got != 0 {
		t.Errorf("no interval: wait = %v, want 0", got)
	}
	if got := (stall{Every: time.Second}).wait(0); got != 0 {
		t.Errorf("no length: wait = %v, want 0", got)
	}
}

func TestReportJSON(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["transfersPerSecond"] != 100.0 || m["kills"] != 21.0 || m["latency"].(map[string]any)["p99Ms"] != 4.25 ||
		m["errorsByCode"].(map[string]any)["INSUFFICIENT_FUNDS"] != 2.0 || m["serverPeakRssBytes"] != float64(100<<20) {
		t.Fatalf("json: %s", b.String())
	}
}

func TestParsers(t *testing.T) {
	pg := "transaction type: <builtin: TPC-B (sort of)>\nnumber of clients: 8\nlatency average = 5.3 ms\n" +
		"initial connection time = 12.3 ms\ntps = 1490.812345 (without initial connection time)\n"
	if tps, err := parsePgbenchTPS(pg); err != nil || tps != 1490.812345 {
		t.Fatalf("pgbench: %v %v", tps, err)
	}
	if _, err := parsePgbenchTPS("nothing"); err == nil {
		t.Fatal("want an error")
	}
	status := "Name:\tpaymentsd\nVmPeak:\t 1000 kB\nVmHWM:\t   55296 kB\nVmRSS:\t 50000 kB\n"
	if v, err := parseVmHWM(strings.NewReader(status)); err != nil || v != 55296*1024 {
		t.Fatalf("VmHWM: %v %v", v, err)
	}
	if _, err := parseVmHWM(strings.NewReader("Name: x\n")); err == nil {
		t.Fatal("want an error")
	}
	metrics := "# HELP process_resident_memory_bytes x\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 5.0655232e+07\n"
	if v := parseProcessRSS(strings.NewReader(metrics)); v != 50655232 {
		t.Fatalf("metrics: %v", v)
	}
	if rebind("postgres", "a = ? AND b IN (?, ?)") != "a = $1 AND b IN ($2, $3)" || rebind("sqlite", "a = ?") != "a = ?" {
		t.Fatal("rebind")
	}
	if ratio(150, 100) != 1.5 || ratio(1, 0) != 0 {
		t.Fatal("ratio")
	}
}

func TestRetryable(t *testing.T) {
	conflict := apiResult{Status: 409, Body: []byte(`{"code":"OPERATION_IN_PROGRESS"}`)}
	other := apiResult{Status: 409, Body: []byte(`{"code":"CONFLICT"}`)}
	for _, c := range []struct {
		r    apiResult
		err  error
		want bool
	}{
		{apiResult{}, errors.New("connection refused"), true},
		{apiResult{Status: 500}, nil, true},
		{apiResult{Status: 503}, nil, true},
		{apiResult{Status: 429}, nil, true},
		{conflict, nil, true},
		{other, nil, false},
		{apiResult{Status: 200}, nil, false},
		{apiResult{Status: 400, Body: []byte(`{"code":"INSUFFICIENT_FUNDS"}`)}, nil, false},
	} {
		if got := retryable(c.r, c.err); got != c.want {
			t.Errorf("%d %s %v: got %v", c.r.Status, c.r.Body, c.err, got)
		}
	}
	if (apiResult{Status: 502}).Code() != "HTTP_502" || other.Code() != "CONFLICT" {
		t.Fatal("Code")
	}
}

func TestCheckEffects(t *testing.T) {
	acks := []ack{{Key: "k1", QuoteID: "q1"}, {Key: "k2", QuoteID: "q2"}}
	keys := map[string]idemRecord{"k1": {200, "q1"}, "k2": {200, "q2"}, "k3": {400, ""}}
	quotes := map[string]bool{"q1": true, "q2": true}
	out := map[string]int{"q1": 1, "q2": 1}
	st := map[string]string{"q1": "COMPLETED", "q2": "COMPLETED"}
	all := func(rs []CheckResult) (fails []string) {
		for _, r := range rs {
			if !r.Pass {
				fails = append(fails, r.Name+": "+r.Detail)
			}
		}
		return fails
	}
	if f := all(checkEffects(acks, 0, keys, quotes, out, st)); len(f) != 0 {
		t.Fatalf("clean run fails: %v", f)
	}
	// An acknowledged transfer lost.
	if f := all(checkEffects(acks, 0, keys, map[string]bool{"q1": true}, map[string]int{"q1": 1}, st)); len(f) == 0 {
		t.Fatal("lost transfer not caught")
	}
	// Executed twice.
	if f := all(checkEffects(acks, 0, keys, quotes, map[string]int{"q1": 2, "q2": 1}, st)); len(f) == 0 {
		t.Fatal("double execution not caught")
	}
	// A second quote for a key (an orphan effect the client never saw).
	q3 := map[string]bool{"q1": true, "q2": true, "q3": true}
	if f := all(checkEffects(acks, 0, keys, q3, out, st)); len(f) == 0 {
		t.Fatal("orphan quote not caught")
	}
	// The key recorded another quote than the client saw.
	if f := all(checkEffects(acks, 0, map[string]idemRecord{"k1": {200, "q2"}, "k2": {200, "q2"}}, quotes, out, st)); len(f) == 0 {
		t.Fatal("key mismatch not caught")
	}
	// Not completed.
	if f := all(checkEffects(acks, 0, keys, quotes, out, map[string]string{"q1": "PROCESSING", "q2": "COMPLETED"})); len(f) == 0 {
		t.Fatal("unsettled transfer not caught")
	}
	// A payout of a magic amount must end FAILED (refunded), another COMPLETED.
	payouts := []ack{{Key: "k1", QuoteID: "q1", Payout: true, Sent: 1903}, {Key: "k2", QuoteID: "q2", Payout: true, Sent: 1900}}
	if f := all(checkEffects(payouts, 0, keys, quotes, out, map[string]string{"q1": "FAILED", "q2": "COMPLETED"})); len(f) != 0 {
		t.Fatalf("payouts in their final status fail: %v", f)
	}
	if f := all(checkEffects(payouts, 0, keys, quotes, out, st)); len(f) == 0 {
		t.Fatal("a magic-amount payout that completed not caught")
	}
	if f := all(checkEffects(payouts, 0, keys, quotes, out, map[string]string{"q1": "FAILED", "q2": "PROCESSING"})); len(f) == 0 {
		t.Fatal("an unsettled payout not caught")
	}
}

// The sandbox's magic amounts (docs/sandbox.md): 901 to 906 fail or return
// a payout; the same digits on an internal transfer mean nothing.
func TestFinalStatus(t *testing.T) {
	for _, c := range []struct {
		a    ack
		want string
	}{
		{ack{Sent: 1901}, "COMPLETED"},
		{ack{Sent: 1901, FX: true}, "COMPLETED"},
		{ack{Sent: 1900, Payout: true}, "COMPLETED"},
		{ack{Sent: 1901, Payout: true}, "FAILED"},
		{ack{Sent: 906, Payout: true}, "FAILED"},
		{ack{Sent: 1907, Payout: true}, "COMPLETED"},
		{ack{Sent: 12901, Payout: true}, "FAILED"},
	} {
		if got := c.a.finalStatus(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.a, got, c.want)
		}
	}
}

// tinyStore opens a migrated store with a default platform and a few
// ledger transfers, and returns its URL. SQLite always; PostgreSQL in a
// schema of its own when storetest's variable is set.
func tinyStore(t *testing.T, engine string) (*store.DB, string, store.Tenant) {
	t.Helper()
	ctx := context.Background()
	var dbURL string
	switch engine {
	case "sqlite":
		dbURL = "sqlite:" + filepath.Join(t.TempDir(), "payments.db")
	case "postgres":
		base := os.Getenv(storetest.PostgresEnv)
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		schema := "pb_" + randHex(6)
		if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE"); admin.Close() })
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		dbURL = u.String()
	}
	db, err := store.Open(ctx, dbURL, store.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, _, err := platforms.Bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	l := ledger.New(db)
	world, err := l.SystemAccount(ctx, tn, ledger.CodeWorld, "USD")
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.CreateAccount(ctx, tn, ledger.AccountSpec{Currency: "USD", Kind: ledger.Internal, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.CreateAccount(ctx, tn, ledger.AccountSpec{Currency: "USD", Kind: ledger.Internal, Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Commit(ctx, tn, []ledger.TransferSpec{
		{Postings: []ledger.PostingSpec{{AccountID: world.ID, Currency: "USD", Amount: -1000}, {AccountID: a.ID, Currency: "USD", Amount: 1000}}},
		{Postings: []ledger.PostingSpec{{AccountID: a.ID, Currency: "USD", Amount: -300}, {AccountID: b.ID, Currency: "USD", Amount: 300}}},
	}); err != nil {
		t.Fatal(err)
	}
	return db, dbURL, tn
}

func engines() []string {
	es := []string{"sqlite"}
	if os.Getenv(storetest.PostgresEnv) != "" {
		es = append(es, "postgres")
	}
	return es
}

// The invariant SQL passes on a consistent ledger and catches a balance
// row that disagrees with its postings, a statement bucket that does, and an
// unbalanced transfer.
func TestLedgerChecksSQL(t *testing.T) {
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			_, dbURL, _ := tinyStore(t, engine)
			chk, err := openDBChecker(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer chk.Close()
			sqlDB, eng := chk.db, chk.engine
			for _, r := range chk.LedgerChecks(ctx) {
				if !r.Pass {
					t.Fatalf("consistent ledger: %s: %s", r.Name, r.Detail)
				}
			}
			failing := func() map[string]bool {
				m := map[string]bool{}
				for _, r := range chk.LedgerChecks(ctx) {
					if !r.Pass {
						m[r.Name] = true
					}
				}
				return m
			}
			// A balance row that says more than its postings (the CHECK
			// allows it: still non-negative).
			if _, err := sqlDB.Exec("UPDATE ledger_balances SET posted = posted + 5 WHERE posted = 300"); err != nil {
				t.Fatal(err)
			}
			if f := failing(); !f["db: every balance row equals the sum of its postings"] || len(f) != 1 {
				t.Fatalf("after corrupting a balance: %v", f)
			}
			if _, err := sqlDB.Exec("UPDATE ledger_balances SET posted = posted - 5 WHERE posted = 305"); err != nil {
				t.Fatal(err)
			}
			// Statement buckets that miss a posting (as raw SQL leaves them).
			if _, err := sqlDB.Exec("UPDATE ledger_posting_buckets SET amount = amount + 1 WHERE span = 3600000000"); err != nil {
				t.Fatal(err)
			}
			if f := failing(); !f["db: statement buckets equal the sums of their postings"] || len(f) != 1 {
				t.Fatalf("after corrupting the buckets: %v", f)
			}
			if _, err := sqlDB.Exec("UPDATE ledger_posting_buckets SET amount = amount - 1 WHERE span = 3600000000"); err != nil {
				t.Fatal(err)
			}
			// A transfer row gone under its postings and its transaction
			// (SQLite's foreign keys refuse that; PostgreSQL has none here).
			if eng == "postgres" {
				var posting, transfer string
				if err := sqlDB.QueryRow("SELECT id, transfer_id FROM ledger_postings WHERE amount = 300 LIMIT 1").Scan(&posting, &transfer); err != nil {
					t.Fatal(err)
				}
				move := "UPDATE ledger_postings SET transfer_id = $1 WHERE id = $2"
				if _, err := sqlDB.Exec(move, "LedgerTransfer:gone", posting); err != nil {
					t.Fatal(err)
				}
				if f := failing(); !f[danglingCheck] {
					t.Fatalf("after a posting lost its transfer: %v", f)
				}
				if _, err := sqlDB.Exec(move, transfer, posting); err != nil {
					t.Fatal(err)
				}
			}
			// A posting that makes a transfer (and the currency) unbalanced.
			if _, err := sqlDB.Exec(rebind(eng, "UPDATE ledger_postings SET amount = amount + 1 WHERE amount = ?"), 300); err != nil {
				t.Fatal(err)
			}
			f := failing()
			if !f["db: every ledger transfer sums to zero per currency"] || !f["db: posted postings sum to zero per currency (money conserved in the ledger)"] {
				t.Fatalf("after unbalancing a transfer: %v", f)
			}
		})
	}
}

// With -fx the run's USD accounts must hold what was funded less what the
// cross-currency transfers sent (fees included), and its EUR accounts what
// they delivered; without it, one USD expectation equal to the funding.
func TestExpectedTotals(t *testing.T) {
	plain := setupResult{Accounts: []account{{AccountID: "a"}, {AccountID: "b"}}, TotalFunded: 2000}
	acks := []ack{{Amount: 10, Sent: 10, Received: 10}, {FX: true, Amount: 1100, Sent: 1100, Received: 950}, {FX: true, Sent: 1500, Received: 1300}}
	got := expectedTotals(plain, acks[:1], 0)
	if len(got) != 1 || got[0].currency != "USD" || got[0].want != 2000 || len(got[0].accountIDs) != 2 {
		t.Fatalf("same-currency run: %+v", got)
	}
	fx := setupResult{Accounts: []account{{AccountID: "a", EURAccountID: "ae"}, {AccountID: "b", EURAccountID: "be"}}, TotalFunded: 2000}
	got = expectedTotals(fx, acks, 0)
	if len(got) != 2 || got[0].want != 2000-1100-1500 || got[1].currency != "EUR" || got[1].want != 950+1300 ||
		got[1].accountIDs[1] != "be" || got[0].note != "" {
		t.Fatalf("fx run: %+v", got)
	}
	if got = expectedTotals(fx, acks, 2); got[1].note == "" {
		t.Fatal("unresolved requests must be noted as making the figure inexact")
	}
	if r := got[0].check("db", got[0].want, nil); !r.Pass {
		t.Fatalf("%+v", r)
	}
	if r := got[1].check("api", got[1].want+1, nil); r.Pass || !strings.Contains(r.Detail, "+1") || !strings.Contains(r.Detail, "unresolved") {
		t.Fatalf("%+v", r)
	}
	// Completed payouts leave the run's accounts; failed or returned ones
	// are refunded in full.
	payouts := []ack{{Amount: 10, Sent: 10}, {Payout: true, Sent: 1500}, {Payout: true, Sent: 1904}}
	got = expectedTotals(plain, payouts, 0)
	if len(got) != 1 || got[0].want != 2000-1500 || got[0].note != "" {
		t.Fatalf("payout run: %+v", got)
	}
	if got = expectedTotals(plain, payouts, 1); got[0].note == "" {
		t.Fatal("an unresolved request may be a payout: the figure is inexact")
	}
	if got = expectedTotals(plain, payouts[:1], 1); got[0].note != "" {
		t.Fatal("without money leaving the accounts, unresolved requests change no total")
	}
}
