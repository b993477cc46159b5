package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
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

	"github.com/paymentsd/paymentsd/internal/store"
)

// swCaptures is how many transfers the capture makes, one at a time.
const swCaptures = 8

// swEnv is what the same-work baseline needs from the run.
type swEnv struct {
	o     options
	bin   string
	runID string
	accts []account
}

// sameWork copies the run's database (its server stopped), starts paymentsd
// on the copy with the statement log on, makes swCaptures transfers one at
// a time (so each commit holds exactly one transfer), builds the template
// from their transactions, and replays it on the same copy at the run's
// concurrency and duration: pgbench on PostgreSQL, a Go loop on SQLite.
func sameWork(ctx context.Context, e swEnv, ours float64, logf func(string, ...any)) (Comparison, *swTemplate) {
	name := "same-work " + map[string]string{"postgres": "pgbench (PostgreSQL)", "sqlite": "SQLite loop"}[engineOf(e.o.db)]
	fail := func(err error) (Comparison, *swTemplate) {
		logf("same-work baseline: %v", err)
		return Comparison{Name: name, Note: "failed: " + err.Error()}, nil
	}
	tmp, err := os.MkdirTemp(filepathDir(e.o.db), "samework-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	copyURL, drop, err := copyDatabase(ctx, e.o.db, e.o.pgAdmin, tmp)
	if err != nil {
		return fail(fmt.Errorf("copy the database: %w", err))
	}
	defer drop()
	logPath := filepath.Join(tmp, "statements.jsonl")
	samples, err := captureTransfers(ctx, e, copyURL, logPath, logf)
	if err != nil {
		return fail(err)
	}
	samples, dropped := steadyShape(samples)
	if dropped > 0 {
		logf("same-work baseline: %d of %d captured transfers ran other statements than the rest: left out", dropped, dropped+len(samples))
	}
	t, err := buildTemplate(samples)
	if err != nil {
		return fail(err)
	}
	ntx, nst := t.Counts()
	logf("same-work baseline: one transfer is %d transaction(s), %d statements; %d clients for %s", ntx, nst, e.o.concurrency, e.o.duration)
	accts := make([]swAccount, len(e.accts))
	for i, a := range e.accts {
		accts[i] = swAccount{Acct: a.AccountID, Cust: a.CustomerID}
	}
	var tps float64
	var cpu time.Duration
	var note string
	if engineOf(e.o.db) == "postgres" {
		tps, cpu, note, err = runPgbenchSameWork(ctx, t, copyURL, accts, e.o, tmp)
	} else {
		tps, cpu, err = sqliteSameWork(ctx, t, copyURL, accts, e.o.concurrency, e.o.duration, e.o.maxAmount)
		note = "Go loop, the service's pragmas, one writer connection, prepared statements"
		if n := swMissedUpdates.Swap(0); n > 0 {
			note += fmt.Sprintf("; %d UPDATEs matched no row", n)
		}
	}
	if err != nil {
		return fail(err)
	}
	note = fmt.Sprintf("%d statements in %d transaction(s) per transfer; %s", nst, ntx, note)
	return Comparison{Name: name, TPS: tps, Ratio: ratio(ours, tps), Note: note, MachineMs: perTx(cpu, tps, e.o.duration)}, t
}

// copyDatabase copies a stopped run's database: a PostgreSQL database from
// it as template, or a SQLite file (with its WAL and key file) into dir.
func copyDatabase(ctx context.Context, dbURL, admin, dir string) (string, func(), error) {
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		path = strings.TrimPrefix(path, "//")
		dst := filepath.Join(dir, "copy.db")
		for _, suf := range []string{"", "-wal", ".keys"} {
			if err := copyFile(path+suf, dst+suf); err != nil && !os.IsNotExist(err) {
				return "", nil, err
			}
		}
		return "sqlite:" + dst, func() {}, nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", nil, err
	}
	src := strings.TrimPrefix(u.Path, "/")
	name := src + "_sw"
	if !identRE.MatchString(src) || src == "postgres" {
		return "", nil, fmt.Errorf("refusing to copy database %q", src)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", nil, err
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+src); err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		if db, err := sql.Open("pgx", admin); err == nil {
			_, _ = db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			db.Close()
		}
	}
	return u.String(), drop, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// captureTransfers runs paymentsd on copyURL with the statement log at
// logPath and makes swCaptures transfers one after another, each between
// its own two accounts with its own amount, reading both balances'
// versions before; it returns each one's transactions and roles.
func captureTransfers(ctx context.Context, e swEnv, copyURL, logPath string, logf func(string, ...any)) ([]sample, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	env := []string{store.StatementLogEnv + "=" + logPath}
	if k := benchKeys(e.o.db); k != "" {
		env = append(env, "PAYMENTS_KEYS="+k) // the copy's secrets are sealed with the original's key
	}
	var out strings.Builder
	srv := &server{bin: e.bin, dbURL: copyURL, creds: e.o.token, addr: addr, logw: &lockedWriter{w: &out}, env: env}
	if err := srv.start(ctx); err != nil {
		return nil, fmt.Errorf("start paymentsd on the copy: %w: %s", err, lastLines(out.String(), 5))
	}
	defer srv.stop()
	db, engine, err := openSQL(copyURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	c := newClient(srv.URL(), e.o.token, 2)
	var samples []sample
	n := len(e.accts)
	for k := 0; k < swCaptures; k++ {
		src, dst := e.accts[(2*k)%n], e.accts[(2*k+1)%n]
		if src.AccountID > dst.AccountID {
			// The same order in every capture: the service sorts the two
			// accounts (lock order), so a posting's place in a statement
			// depends on which id is smaller.
			src, dst = dst, src
		}
		amount := int64(101 + 37*k)
		roles := map[string]val{"src_acct": {Kind: 's', S: src.AccountID}, "dst_acct": {Kind: 's', S: dst.AccountID},
			"src_cust": {Kind: 's', S: src.CustomerID}, "dst_cust": {Kind: 's', S: dst.CustomerID},
			"amount": {Kind: 'i', I: amount}, "neg_amount": {Kind: 'i', I: -amount}}
		for role, acct := range map[string]string{"src_version": src.AccountID, "dst_version": dst.AccountID} {
			var v int64
			if err := db.QueryRowContext(ctx, rebind(engine, "SELECT version FROM ledger_balances WHERE account_id = ?"), acct).Scan(&v); err != nil {
				return nil, fmt.Errorf("balance version: %w", err)
			}
			roles[role] = val{Kind: 'i', I: v}
		}
		key := fmt.Sprintf("%s-sw-%d", e.runID, k)
		roles["key"] = val{Kind: 's', S: key}
		body := map[string]any{
			"source":             map[string]any{"sourceType": "ACCOUNT", "accountId": src.AccountID},
			"destination":        map[string]any{"destinationType": "ACCOUNT", "accountId": dst.AccountID},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "immediatelyExecute": true,
		}
		r, _, err := c.doRetry(ctx, "POST", "/quotes", body, key)
		if err != nil {
			return nil, fmt.Errorf("capture transfer %d: %w", k+1, err)
		}
		if r.Status != http.StatusOK {
			return nil, fmt.Errorf("capture transfer %d: %d %s", k+1, r.Status, r.Body)
		}
		samples = append(samples, sample{Roles: roles})
	}
	srv.stop()
	f, err := os.Open(logPath)
	if err != nil {
		return nil, fmt.Errorf("statement log: %w", err)
	}
	defer f.Close()
	txs, err := parseStmtLog(f)
	if err != nil {
		return nil, err
	}
	for i := range samples {
		samples[i].Txs = transferTxs(txs, samples[i].Roles["key"].S)
	}
	logf("same-work baseline: captured %d transfers from %d logged transactions", len(samples), len(txs))
	return samples, nil
}

var failedRE = regexp.MustCompile(`number of failed transactions: ([0-9]+)`)

// runPgbenchSameWork fills the helper table, writes the script and runs
// pgbench (prepared statements, as pgx uses them; deadlocks and
// serialization failures retried, as paymentsd retries them).
func runPgbenchSameWork(ctx context.Context, t *swTemplate, dbURL string, accts []swAccount, o options, dir string) (float64, time.Duration, string, error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0, 0, "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+swAccountsTable+" (n INT PRIMARY KEY, acct TEXT NOT NULL, cust TEXT NOT NULL)"); err != nil {
		return 0, 0, "", err
	}
	for i, a := range accts {
		if _, err := db.ExecContext(ctx, "INSERT INTO "+swAccountsTable+" VALUES ($1, $2, $3)", i+1, a.Acct, a.Cust); err != nil {
			return 0, 0, "", err
		}
	}
	script := filepath.Join(dir, "samework.sql")
	if err := os.WriteFile(script, []byte(pgbenchScript(t, len(accts), o.maxAmount)), 0o644); err != nil {
		return 0, 0, "", err
	}
	if o.swScript != "" {
		_ = copyFile(script, o.swScript)
	}
	secs := max(1, int(o.duration.Seconds()))
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-M", "prepared", "--max-tries", "10", "-f", script,
		"-c", strconv.Itoa(o.concurrency), "-j", "2", "-T", strconv.Itoa(secs), dbURL)
	before := machineCPU()
	b, err := cmd.CombinedOutput()
	cpu := machineCPU() - before
	if err != nil {
		return 0, 0, "", fmt.Errorf("pgbench: %v: %s", err, lastLines(string(b), 8))
	}
	tps, err := parsePgbenchTPS(string(b))
	note := fmt.Sprintf("pgbench -M prepared --max-tries 10 -c %d -j 2 -T %d; one \\gset read of the two accounts before BEGIN", o.concurrency, secs)
	if m := failedRE.FindStringSubmatch(string(b)); m != nil && m[1] != "0" {
		note += "; " + m[1] + " transactions failed"
	}
	return tps, cpu, note, err
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// sqliteSameWork replays the template on a SQLite file with the pragmas of
// paymentsd's writer, one transaction per transfer, from workers goroutines
// sharing its one connection, for d.
func sqliteSameWork(ctx context.Context, t *swTemplate, dbURL string, accts []swAccount, workers int, d time.Duration, maxAmount int64) (float64, time.Duration, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "//")
	db, err := sql.Open("sqlite", store.SQLiteWriterDSN(path))
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmts := map[string]*sql.Stmt{}
	probe := t.draw(rand.New(rand.NewPCG(1, 1)), accts, maxAmount, 0, 0)
	for _, tx := range t.Txs {
		for _, s := range tx.Stmts {
			q, _ := s.bind(probe)
			if _, ok := stmts[q]; !ok {
				if stmts[q], err = db.PrepareContext(ctx, q); err != nil {
					return 0, 0, fmt.Errorf("prepare %s: %w", statementHead(q), err)
				}
			}
		}
	}
	start := time.Now()
	return timedLoop(d, workers, func(w int) *rand.Rand { return rand.New(rand.NewPCG(uint64(w)+1, uint64(start.UnixNano()))) },
		func(rng *rand.Rand, w int, seq int64) (bool, error) {
			dr := t.draw(rng, accts, maxAmount, w, seq)
			for _, tx := range t.Txs {
				if err := replayTx(ctx, db, stmts, tx, dr); err != nil {
					return false, err
				}
			}
			return true, nil
		})
}

// swMissedUpdates counts replayed UPDATEs that matched no row (the
// service's would have matched one): a sign the replay does less work.
var swMissedUpdates atomic.Int64

func replayTx(ctx context.Context, db *sql.DB, stmts map[string]*sql.Stmt, tx swTx, dr swDraw) error {
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer sqlTx.Rollback() //nolint:errcheck
	for _, s := range tx.Stmts {
		q, args := s.bind(dr)
		st := sqlTx.StmtContext(ctx, stmts[q])
		if s.Op == "query" {
			rows, err := st.QueryContext(ctx, args...)
			if err != nil {
				return fmt.Errorf("%s: %w", statementHead(q), err)
			}
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", statementHead(q), err)
			}
			continue
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("%s: %w", statementHead(q), err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 && strings.HasPrefix(strings.TrimSpace(q), "UPDATE") {
			swMissedUpdates.Add(1)
		}
	}
	return sqlTx.Commit()
}

// lockedWriter serialises the writes of a process's stdout and stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
