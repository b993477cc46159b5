package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// resetDatabase empties the spawn database: removes a SQLite file (and its
// WAL), or drops and recreates a PostgreSQL database through admin.
func resetDatabase(ctx context.Context, dbURL, admin string) error {
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		path = strings.TrimPrefix(path, "//")
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		return nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return err
	}
	return recreatePostgres(ctx, admin, strings.TrimPrefix(u.Path, "/"))
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

func recreatePostgres(ctx context.Context, admin, name string) error {
	if !identRE.MatchString(name) || name == "postgres" {
		return fmt.Errorf("refusing to recreate database %q (want a lowercase scratch name such as paymentsbench)", name)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "CREATE DATABASE "+name)
	return err
}

// compare runs the baselines and fills the ratios.
func compare(ctx context.Context, o options, rep *Report, logf func(string, ...any)) []Comparison {
	var out []Comparison
	eng := engineOf(o.db)
	if eng == "postgres" || o.compareAll {
		logf("pgbench tpcb-like: %d clients for %s", o.concurrency, o.duration)
		tps, cpu, note, err := runPgbench(ctx, o.pgAdmin, pgbenchDatabase(o.db), o.concurrency, o.duration)
		if err != nil {
			note = "failed: " + err.Error()
		}
		out = append(out, Comparison{Name: "pgbench tpcb-like (PostgreSQL)", TPS: tps, Ratio: ratio(rep.Throughput, tps), Note: note,
			MachineMs: perTx(cpu, tps, o.duration)})
	}
	if eng == "sqlite" || o.compareAll {
		logf("plain SQLite loop: %d goroutines for %s", o.concurrency, o.duration)
		dir, err := os.MkdirTemp(filepathDir(o.db), "sqliteloop-")
		var tps float64
		var cpu time.Duration
		note := "WAL, synchronous=FULL, one writer connection, BEGIN IMMEDIATE; 2 UPDATEs + 1 INSERT per commit"
		if err == nil {
			tps, cpu, err = sqliteLoop(ctx, filepath.Join(dir, "loop.db"), o.concurrency, o.duration)
			os.RemoveAll(dir)
		}
		if err != nil {
			note = "failed: " + err.Error()
		}
		out = append(out, Comparison{Name: "plain SQLite loop", TPS: tps, Ratio: ratio(rep.Throughput, tps), Note: note,
			MachineMs: perTx(cpu, tps, o.duration)})
	}
	return out
}

// filepathDir is the directory of a sqlite: URL's file, so the loop runs on
// the same disk ("" otherwise: the system temp dir).
func filepathDir(dbURL string) string {
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		return filepath.Dir(strings.TrimPrefix(path, "//"))
	}
	return ""
}

// machineCPU is the machine's busy CPU time so far, 0 without /proc (the
// baselines need no split by process).
func machineCPU() time.Duration {
	d, _ := machineBusy()
	return d
}

// perTx is machine CPU milliseconds per transaction of a baseline that ran
// at tps for d (0 when unknown).
func perTx(cpu time.Duration, tps float64, d time.Duration) float64 {
	n := tps * d.Seconds()
	if cpu <= 0 || n <= 0 {
		return 0
	}
	return float64(cpu) / float64(time.Millisecond) / n
}

func ratio(ours, theirs float64) float64 {
	if theirs == 0 {
		return 0
	}
	return float64(int(ours/theirs*1000+0.5)) / 1000
}

var tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \((without|excluding) initial connection`)

// parsePgbenchTPS reads pgbench's "tps = N (without initial connection time)".
func parsePgbenchTPS(out string) (float64, error) {
	m := tpsRE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no tps line in pgbench output")
	}
	return strconv.ParseFloat(m[1], 64)
}

// pgbenchDatabase is the database pgbench's tables go in: the run's
// PostgreSQL database name + "_pgbench" (paymentsbench_pgbench for the
// default paymentsbench), so runs on different databases do not share it.
func pgbenchDatabase(dbURL string) string {
	if u, err := url.Parse(dbURL); err == nil && engineOf(dbURL) == "postgres" {
		if name := strings.TrimPrefix(u.Path, "/"); identRE.MatchString(name) {
			return name + "_pgbench"
		}
	}
	return "paymentsbench_pgbench"
}

// runPgbench initialises the database name (scale 10, so 10 branches:
// at least as many as clients up to 10) and runs the built-in tpcb-like
// script; cpu is the machine's CPU time during the run (not the
// initialisation).
func runPgbench(ctx context.Context, admin, name string, clients int, d time.Duration) (tps float64, cpu time.Duration, note string, err error) {
	if err := recreatePostgres(ctx, admin, name); err != nil {
		return 0, 0, "", err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return 0, 0, "", err
	}
	u.Path = "/" + name
	scale := max(10, clients)
	init := exec.CommandContext(ctx, "pgbench", "-i", "-q", "-s", strconv.Itoa(scale), u.String())
	if b, err := init.CombinedOutput(); err != nil {
		return 0, 0, "", fmt.Errorf("pgbench -i: %v: %s", err, b)
	}
	secs := max(1, int(d.Seconds()))
	cmd := exec.CommandContext(ctx, "pgbench", "-b", "tpcb-like", "-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(secs), u.String())
	before := machineCPU()
	b, err := cmd.CombinedOutput()
	cpu = machineCPU() - before
	if err != nil {
		return 0, 0, "", fmt.Errorf("pgbench: %v: %s", err, b)
	}
	tps, err = parsePgbenchTPS(string(b))
	return tps, cpu, fmt.Sprintf("scale %d, -c %d -j 2 -T %d", scale, clients, secs), err
}

// sqliteLoop commits one debit/credit transfer per transaction (two
// account UPDATEs and a history INSERT) from workers goroutines through one
// connection, in WAL with synchronous=FULL, for d; it returns commits/s and
// the machine's CPU time during the loop.
func sqliteLoop(ctx context.Context, path string, workers int, d time.Duration) (float64, time.Duration, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	const accounts = 100_000
	for _, q := range []string{
		"CREATE TABLE accounts (aid INTEGER PRIMARY KEY, abalance BIGINT NOT NULL)",
		"CREATE TABLE history (id INTEGER PRIMARY KEY, src INTEGER NOT NULL, dst INTEGER NOT NULL, delta BIGINT NOT NULL, mtime BIGINT NOT NULL)",
		fmt.Sprintf("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d) INSERT INTO accounts SELECT i, 1000000 FROM n", accounts),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return 0, 0, err
		}
	}
	return timedLoop(d, workers, func(w int) *rand.Rand { return rand.New(rand.NewPCG(uint64(w), 7)) },
		func(rng *rand.Rand, _ int, _ int64) (bool, error) {
			src, dst := 1+rng.IntN(accounts), 1+rng.IntN(accounts)
			if src == dst {
				return false, nil
			}
			delta := 1 + rng.Int64N(1000)
			return true, func() error {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				defer tx.Rollback() //nolint:errcheck
				if _, err := tx.ExecContext(ctx, "UPDATE accounts SET abalance = abalance - ? WHERE aid = ?", delta, src); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "UPDATE accounts SET abalance = abalance + ? WHERE aid = ?", delta, dst); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "INSERT INTO history (src, dst, delta, mtime) VALUES (?, ?, ?, ?)", src, dst, delta, time.Now().UnixMicro()); err != nil {
					return err
				}
				return tx.Commit()
			}()
		})
}

// readLatency is the page latency of the list endpoints after a run.
type readLatency struct {
	Transactions      int64   `json:"transactionsInDatabase"`
	ListPage          Latency `json:"listTransactionsPage"`
	BalanceChanges    Latency `json:"balanceChangesPage"`
	StatementPostings int     `json:"statementAccountPostings,omitempty"`
}

// measureReads times n first pages of GET /transactions (limit 20, with
// totalCount) and of one account's balance changes over all time.
func measureReads(ctx context.Context, c *client, s setupResult, n int) (readLatency, error) {
	var rr readLatency
	var list, bc []time.Duration
	acct := s.Accounts[0].AccountID
	end := time.Now().Add(-6 * time.Second).UTC().Format(time.RFC3339Nano)
	q := url.Values{"startDate": {"2020-01-01T00:00:00Z"}, "endDate": {end}, "limit": {"20"}}
	for i := 0; i < n; i++ {
		t0 := time.Now()
		var page struct {
			TotalCount int64 `json:"totalCount"`
		}
		if err := c.must(ctx, "GET", "/transactions?limit=20", nil, http.StatusOK, &page); err != nil {
			return rr, err
		}
		list = append(list, time.Since(t0))
		rr.Transactions = page.TotalCount
		t0 = time.Now()
		if err := c.must(ctx, "GET", "/internal-accounts/"+acct+"/balance-changes?"+q.Encode(), nil, http.StatusOK, nil); err != nil {
			return rr, err
		}
		bc = append(bc, time.Since(t0))
	}
	rr.ListPage, rr.BalanceChanges = Summarise(list), Summarise(bc)
	return rr, nil
}

// pgCounters are the database's cumulative statistics (pg_stat_database).
type pgCounters struct {
	Commits, Rollbacks, Inserted, Updated, Fetched, Returned int64
}

// readPgCounters reads pg_stat_database for the database of dbURL; it
// returns false on SQLite or on error.
func readPgCounters(ctx context.Context, dbURL string) (pgCounters, bool) {
	var c pgCounters
	if engineOf(dbURL) != "postgres" {
		return c, false
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return c, false
	}
	defer db.Close()
	// The statistics are flushed by backends at most every second or so.
	_, _ = db.ExecContext(ctx, "SELECT pg_stat_force_next_flush()")
	err = db.QueryRowContext(ctx, `SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_fetched, tup_returned
		FROM pg_stat_database WHERE datname = current_database()`).
		Scan(&c.Commits, &c.Rollbacks, &c.Inserted, &c.Updated, &c.Fetched, &c.Returned)
	return c, err == nil
}

// perTransfer divides the counters' growth by n transfers.
func perTransfer(before, after pgCounters, n int64) map[string]float64 {
	if n == 0 {
		return nil
	}
	f := func(a, b int64) float64 { return float64(int((float64(b-a)/float64(n))*100+0.5)) / 100 }
	return map[string]float64{
		"commits": f(before.Commits, after.Commits), "rollbacks": f(before.Rollbacks, after.Rollbacks),
		"rowsInserted": f(before.Inserted, after.Inserted), "rowsUpdated": f(before.Updated, after.Updated),
		"rowsFetched": f(before.Fetched, after.Fetched),
	}
}

// timedLoop runs one on each of workers goroutines until d has passed, and
// returns the rate of the calls that reported a commit and the machine's CPU
// time meanwhile; the first error stops its worker and is returned.
func timedLoop(d time.Duration, workers int, seed func(w int) *rand.Rand,
	one func(rng *rand.Rand, w int, seq int64) (committed bool, err error)) (float64, time.Duration, error) {
	var commits atomic.Int64
	var firstErr error
	var once sync.Once
	stop := time.Now().Add(d)
	start, before := time.Now(), machineCPU()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := seed(w)
			for seq := int64(1); time.Now().Before(stop); seq++ {
				ok, err := one(rng, w, seq)
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if ok {
					commits.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	return float64(commits.Load()) / time.Since(start).Seconds(), machineCPU() - before, nil
}
