// Command paymentsbench drives paymentsd's public HTTP API under load and
// checks the ledger's invariants afterwards (issue 7).
//
//	paymentsbench -spawn -db sqlite:/tmp/bench.db -c 8 -d 30s -customers 200 -compare -json out.json
//	paymentsbench -spawn -db postgres://postgres@127.0.0.1:5432/paymentsbench -crash-every 3s -d 75s
//	paymentsbench -server http://127.0.0.1:8080 -token ID:SECRET -db sqlite:./data/payments.db
//	paymentsbench seed -db URL -transactions 1000000   (multiply a run's transfers in SQL)
//	paymentsbench reads -db URL                         (list and statement page latency, memory)
//	paymentsbench audit -db URL                         (the database-side ledger invariants only)
//	paymentsbench summary ROUND.json...                 (median and range over repeated runs)
//	paymentsbench pairs A1.json B1.json A2.json B2.json… (two versions alternated: B over A per pair)
//
// It creates customers with accepted terms and funded USD accounts, sets the
// webhook endpoint to a no-op receiver on loopback, then runs C workers for
// D, each making internal same-currency transfers (POST /quotes with
// immediatelyExecute) with a fresh Idempotency-Key, retrying unknown
// outcomes (network errors, 5xx, 429, OPERATION_IN_PROGRESS) with the same
// key. It reports throughput, latency percentiles, errors by code and the
// server's peak memory, then checks invariants through the API and in the
// database, and exits 1 if one fails.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "seed" {
		if err := seedMain(context.Background(), os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "paymentsbench seed:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "reads" {
		if err := readsMain(context.Background(), os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "paymentsbench reads:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "summary" {
		code, err := summaryMain(os.Args[2:], os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "paymentsbench summary:", err)
		}
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "pairs" {
		code, err := pairsMain(os.Args[2:], os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "paymentsbench pairs:", err)
		}
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "audit" {
		ok, err := auditMain(context.Background(), os.Args[2:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "paymentsbench audit:", err)
			os.Exit(2)
		}
		if !ok {
			os.Exit(1)
		}
		return
	}
	code, err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "paymentsbench:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

type options struct {
	server, db, bin, token, jsonOut, pgAdmin, logFile string
	swScript, crashNodes                              string
	nodes                                             int
	spawn, check, compare, compareAll, reset, reads   bool
	sameWork                                          bool
	customers, concurrency, sample                    int
	duration, crashEvery, grace, deleteEvery          time.Duration
	fund, maxAmount                                   int64
	mix                                               mix
	settle                                            time.Duration
	hookStall                                         stall
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("paymentsbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "", "drive a running server at this URL (http://host:port)")
	fs.BoolVar(&o.spawn, "spawn", false, "build and start paymentsd on -db (implied by -crash-every)")
	fs.StringVar(&o.db, "db", "", "database: sqlite:PATH or postgres://… (spawn: the server's; always: the one the invariants read)")
	fs.StringVar(&o.bin, "bin", "", "paymentsd binary to spawn (default: go build ./cmd/paymentsd)")
	fs.StringVar(&o.token, "token", os.Getenv("PAYMENTS_SANDBOX_TOKEN"), "sandbox credentials id:secret ($PAYMENTS_SANDBOX_TOKEN; spawn: made up)")
	fs.BoolVar(&o.reset, "reset", true, "spawn: start from an empty database (removes the SQLite file, recreates the PostgreSQL database)")
	fs.StringVar(&o.logFile, "server-log", "", "spawn: write the server's output here (default: a temporary file)")
	fs.IntVar(&o.customers, "customers", 100, "customers (funded accounts) to create")
	fs.IntVar(&o.concurrency, "c", 8, "concurrent clients")
	fs.DurationVar(&o.duration, "d", 30*time.Second, "load duration")
	fs.DurationVar(&o.grace, "grace", 60*time.Second, "how long after -d unresolved requests keep being retried")
	fs.Int64Var(&o.fund, "fund", 100_000_000, "amount each account is funded with (cents)")
	fs.Int64Var(&o.maxAmount, "max-amount", 1000, "transfer amounts are uniform in 1..max-amount (cents)")
	fs.Float64Var(&o.mix.FX, "fx", 0, "share (0..1) of transfers that are cross-currency: USD to the other customer's EUR account")
	fs.Float64Var(&o.mix.Payout, "payout", 0, "share (0..1) of transfers that are payouts: USD to the sender's own external bank account (sandbox ACH)")
	fs.Float64Var(&o.mix.Cards, "cards", 0, "share (0..1) of operations that are sandbox card network messages (authorizations of every kind, declines, clearings, expiries, reversals, advices, returns and their reversals) or card changes (freeze, unfreeze, close) on cards issued at setup to every other customer")
	fs.DurationVar(&o.mix.CardWait, "card-wait", 90*time.Second, "with -cards, how long to wait for a card message to apply (an asynchronous network: its message no longer PENDING; a killed node's claim lasts 30 s) and its effect to show in GET /transactions")
	fs.DurationVar(&o.settle, "settle", 90*time.Second, "with -payout, how long after the load to wait for the rail to settle every acknowledged payout")
	fs.DurationVar(&o.hookStall.Every, "hook-stall-every", 0, "the webhook receiver hiccups at this interval (0: never): see -hook-stall")
	fs.DurationVar(&o.hookStall.For, "hook-stall", 300*time.Millisecond, "with -hook-stall-every, how long each hiccup holds every answer")
	fs.BoolVar(&o.check, "check", true, "check invariants after the run")
	fs.IntVar(&o.sample, "check-sample", 500, "acknowledged transactions read back through the API (all are checked in the database)")
	fs.IntVar(&o.nodes, "nodes", 1, "spawn: run this many paymentsd processes on the one (PostgreSQL) database, each on its own port; load worker w uses node w mod nodes (nodes.go)")
	fs.StringVar(&o.crashNodes, "crash-nodes", "alternate", "with -nodes and -crash-every: which node each kill takes, alternate or random")
	fs.DurationVar(&o.crashEvery, "crash-every", 0, "crash mode: SIGKILL and restart the spawned server at this interval")
	fs.DurationVar(&o.deleteEvery, "delete-every", 0, "delete a customer at this interval during the load, draining its money to another first (deletes.go)")
	fs.BoolVar(&o.compare, "compare", false, "run the baseline of the engine (pgbench tpcb-like or a plain SQLite loop) at the same concurrency and duration")
	fs.BoolVar(&o.sameWork, "same-work", true, "with -compare and -spawn, also run the same-work baseline: the statements of one transfer, from paymentsd's statement log, replayed by pgbench or a SQLite loop (samework.go)")
	fs.StringVar(&o.swScript, "same-work-script", "", "also write the same-work pgbench script to this file")
	fs.BoolVar(&o.compareAll, "compare-all", false, "with -compare, run both baselines")
	fs.StringVar(&o.pgAdmin, "pg-admin", "postgres://postgres@127.0.0.1:5432/postgres", "PostgreSQL maintenance database (to create pgbench's and spawn's databases)")
	fs.BoolVar(&o.reads, "reads", true, "after the run, measure GET /transactions and balance-changes page latency")
	fs.StringVar(&o.jsonOut, "json", "", "also write the report as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.crashEvery > 0 {
		o.spawn = true
	}
	o.mix.MaxAmount = o.maxAmount
	switch {
	case o.spawn && o.server != "":
		return o, errors.New("-server and -spawn exclude each other")
	case !o.spawn && o.server == "":
		return o, errors.New("need -server URL or -spawn")
	case o.spawn && o.db == "":
		return o, errors.New("-spawn needs -db")
	case o.nodes < 1:
		return o, errors.New("-nodes must be at least 1")
	case o.nodes > 1 && (!o.spawn || engineOf(o.db) != "postgres"):
		return o, errors.New("-nodes above 1 needs -spawn on PostgreSQL (nodes share one database)")
	case o.customers < 2:
		return o, errors.New("-customers must be at least 2")
	case o.concurrency < 1:
		return o, errors.New("-c must be at least 1")
	case o.mix.FX < 0 || o.mix.FX > 1:
		return o, errors.New("-fx is a share between 0 and 1")
	case o.mix.Payout < 0 || o.mix.Payout > 1 || o.mix.FX+o.mix.Payout > 1:
		return o, errors.New("-payout is a share between 0 and 1, and with -fx at most 1")
	case o.mix.Cards < 0 || o.mix.Cards >= 1:
		return o, errors.New("-cards is a share from 0 up to (not including) 1")
	case o.mix.Cards > 0 && o.deleteEvery > 0:
		// The deleter retires customers the card traffic may still be
		// authorizing on (not modelled).
		return o, errors.New("-cards and -delete-every exclude each other")
	}
	if o.spawn && o.token == "" {
		o.token = "bench-" + randHex(4) + ":" + randHex(16)
	}
	if o.token == "" {
		return o, errors.New("-token (or PAYMENTS_SANDBOX_TOKEN) is required with -server")
	}
	return o, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func engineOf(dbURL string) string {
	if strings.HasPrefix(dbURL, "sqlite:") {
		return "sqlite"
	}
	if dbURL == "" {
		return "unknown"
	}
	return "postgres"
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return 2, err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	rep := &Report{Engine: engineOf(o.db), Database: redact(o.db), Concurrency: o.concurrency, Customers: o.customers, Nodes: o.nodes,
		Extra: map[string]any{}}
	runID := "bench-" + randHex(6)

	// The server.
	var srv *server
	var srvs []*server // with -nodes, every node; srv is the first
	serverURL := o.server
	if o.spawn {
		tmp, err := os.MkdirTemp("", "paymentsbench-")
		if err != nil {
			return 2, err
		}
		defer os.RemoveAll(tmp)
		bin := o.bin
		if bin == "" {
			logf("building paymentsd")
			if bin, err = buildServer(ctx, tmp); err != nil {
				return 2, err
			}
		}
		if o.reset {
			if err := resetDatabase(ctx, o.db, o.pgAdmin); err != nil {
				return 2, fmt.Errorf("reset %s: %w", redact(o.db), err)
			}
		}
		logPath := o.logFile
		if logPath == "" {
			logPath = filepath.Join(tmp, "paymentsd.log")
		}
		lf, err := os.Create(logPath)
		if err != nil {
			return 2, err
		}
		defer lf.Close()
		lw := &lockedWriter{w: lf}
		for i := 0; i < o.nodes; i++ {
			addr, err := freeAddr()
			if err != nil {
				return 2, err
			}
			n := &server{bin: bin, dbURL: o.db, creds: o.token, addr: addr, logw: lw}
			if err := n.start(ctx); err != nil {
				return 2, err
			}
			defer n.stop()
			srvs = append(srvs, n)
			logf("paymentsd pid %d on %s, database %s", n.cmd.Process.Pid, addr, redact(o.db))
		}
		srv = srvs[0]
		serverURL = srv.URL()
	}
	c := newClient(serverURL, o.token, o.concurrency+4)
	// The load's clients: worker w uses node nodeFor(w) (nodes.go).
	clients := []*client{c}
	for _, n := range srvs[min(1, len(srvs)):] {
		clients = append(clients, newClient(n.URL(), o.token, o.concurrency+4))
	}

	hook, hooksReceived, stopHook, err := webhookSink(o.hookStall)
	if err != nil {
		return 2, err
	}
	defer stopHook()
	if o.hookStall.Every > 0 {
		logf("the webhook receiver answers nothing for %s every %s", o.hookStall.For, o.hookStall.Every)
	}

	logf("setup: %d customers, %d cents each", o.customers, o.fund)
	setupStart := time.Now()
	s, err := setup(ctx, c, runID, hook, o.customers, min(o.concurrency, 8), o.fund, o.mix)
	if err != nil {
		return 2, fmt.Errorf("setup: %w", err)
	}
	logf("setup done in %s", time.Since(setupStart).Round(time.Millisecond))
	if len(s.Cards) > 0 {
		logf("setup: %d ACTIVE cards", len(s.Cards))
	}

	// Load (and crashes).
	pick, err := crashPicker(o.crashNodes, len(srvs), mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 23)))
	if err != nil {
		return 2, err
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var peakFromMetrics func() int64
	if srv == nil {
		peakFromMetrics = metricsPeakRSS(loadCtx, serverURL)
	}
	killsc := make(chan []int, 1)
	crashCtx, stopCrash := context.WithTimeout(ctx, o.duration)
	defer stopCrash()
	if o.crashEvery > 0 {
		go func() { killsc <- crashNodes(crashCtx, srvs, o.crashEvery, pick, logf) }()
	} else {
		killsc <- nil
	}
	logf("load: %d clients for %s", o.concurrency, o.duration)
	loadStart := time.Now().Add(-time.Second)
	pgBefore, havePg := readPgCounters(ctx, o.db)
	var serverCPU func() (time.Duration, bool)
	if srv != nil {
		serverCPU = nodesCPU(srvs)
	}
	cpuBefore, haveCPU := takeCPU(serverCPU)
	nodeURLs := []string{serverURL}
	if len(srvs) > 0 {
		nodeURLs = nodeURLs[:0]
		for _, n := range srvs {
			nodeURLs = append(nodeURLs, n.URL())
		}
	}
	commitsBefore, haveCommits := readCommitter(ctx, nodeURLs)
	hooksBefore := hooksReceived()
	var life *lifecycle
	delc := make(chan deleteResult, 1)
	if o.deleteEvery > 0 {
		life = newLifecycle(len(s.Accounts))
		d := &deleter{c: c, runID: runID, accts: s.Accounts, life: life}
		hard, stopHard := context.WithTimeout(ctx, o.duration+o.grace)
		defer stopHard()
		go func() { delc <- d.run(crashCtx, hard, o.deleteEvery, logf) }()
	} else {
		delc <- deleteResult{}
	}
	lr := runLoad(loadCtx, clients, runID, s.Accounts, s.Cards, o.concurrency, o.duration, o.grace, o.maxAmount, o.mix, life)
	stopCrash()
	for _, k := range <-killsc {
		rep.Kills += k
		if o.nodes > 1 {
			rep.KillsPerNode = append(rep.KillsPerNode, k)
		}
	}
	dr := <-delc
	loadEnd := time.Now()
	if cpuAfter, ok := takeCPU(serverCPU); ok && haveCPU {
		c := split(cpuBefore, cpuAfter, int64(len(lr.Acks)), lr.Elapsed)
		if o.crashEvery > 0 {
			c.OtherMs += c.PostgresMs
			c.PostgresMs, c.Note = 0, "PostgreSQL's backends exit with every killed server: its time is under other"
		}
		rep.CPU = &c
	}
	if commitsAfter, ok := readCommitter(ctx, nodeURLs); ok && haveCommits && o.crashEvery == 0 {
		c := committerDuring(commitsBefore, commitsAfter, int64(len(lr.Acks)), lr.Elapsed)
		rep.Committer = &c
	}
	rep.WebhooksReceived = hooksReceived() - hooksBefore
	rep.WebhooksPending = pendingDeliveries(ctx, o.db)
	if havePg {
		time.Sleep(1100 * time.Millisecond) // pg_stat flush
		if pgAfter, ok := readPgCounters(ctx, o.db); ok {
			rep.PGPerTransfer = perTransfer(pgBefore, pgAfter, int64(len(lr.Acks)))
		}
	}
	logf("load done: %d acknowledged in %s", len(lr.Acks), lr.Elapsed.Round(time.Millisecond))

	rep.Duration = lr.Elapsed.Seconds()
	rep.Attempted, rep.Acked, rep.Retries, rep.Unresolved = lr.Attempted, int64(len(lr.Acks)), lr.Retries, lr.Unresolved
	for _, a := range lr.Acks {
		switch {
		case a.FX:
			rep.CrossCurrency++
		case a.Payout:
			rep.Payouts++
			if a.finalStatus() == "FAILED" {
				rep.PayoutsFailing++
			}
		}
	}
	rep.Throughput = float64(len(lr.Acks)) / lr.Elapsed.Seconds()
	rep.Latency = Summarise(lr.Latencies)
	rep.Errors = lr.Errors
	rep.Timeline = lr.Timeline
	if lr.Cards != nil {
		cs := lr.Cards.summary(len(lr.Cards.Cards))
		rep.Extra["cards"] = cs
		logf("cards: %d transactions, messages %v, declined %v, %d unresolved, %d not as modelled, %d open authorizations cleared at the end",
			cs.Transactions, cs.Messages, cs.Declined, cs.Unresolved, cs.Mismatches, cs.Drained)
	}
	if o.deleteEvery > 0 {
		// The drains are acknowledged transfers of the run: the checks
		// expect each exactly once, like the load's (not in the figures
		// above).
		lr.Acks = append(lr.Acks, dr.Drains...)
		lr.Unresolved += dr.Unresolved
		rep.Deletes = &DeleteSummary{Deleted: len(dr.Deleted), Refused: dr.Refused, Drains: len(dr.Drains)}
		logf("deleted %d customers (%d deletes refused while money was there, %d drain transfers)",
			len(dr.Deleted), dr.Refused, len(dr.Drains))
	}

	if o.reads {
		rr, err := measureReads(ctx, c, s, 50)
		if err != nil {
			logf("read latency: %v", err)
		} else {
			rep.Reads = &rr
		}
	}
	if srv != nil {
		rep.PeakRSS, rep.PeakRSSFrom = nodesPeakRSS(srvs), "VmHWM of the spawned process (max over restarts)"
		if len(srvs) > 1 {
			rep.PeakRSSFrom = "VmHWM of the spawned processes (max over nodes and restarts)"
		}
	}
	stopLoad()
	if peakFromMetrics != nil {
		rep.PeakRSS, rep.PeakRSSFrom = peakFromMetrics(), "max of process_resident_memory_bytes sampled each second"
	}

	if o.check {
		// Statements are available once the window is 5 s (sandbox
		// settlement delay) in the past.
		end := loadEnd.Add(time.Second)
		if wait := time.Until(end.Add(5500 * time.Millisecond)); wait > 0 {
			time.Sleep(wait)
		}
		if rep.Payouts > 0 {
			settled, err := awaitPayouts(ctx, c, lr.Acks, o.settle)
			logf("payouts: %d in their final status (%v)", settled, err)
		}
		if rep.Deletes != nil {
			if susp, err := suspenseTotal(ctx, c, "USD"); err == nil {
				rep.Deletes.SuspenseUSD = susp
			}
		}
		logf("checking invariants")
		rep.Checks = append(rep.Checks, apiChecks(ctx, c, s, lr.Acks, lr.Unresolved, o.sample, [2]time.Time{setupStart.Add(-time.Second), end}, lr.Cards)...)
		if o.deleteEvery > 0 {
			r := CheckResult{Name: fmt.Sprintf("deleter: %d customers deleted, none left holding money", len(dr.Deleted)),
				Pass: len(dr.Failed) == 0 && len(dr.Deleted) > 0}
			if len(dr.Failed) > 0 {
				r.Detail = strings.Join(dr.Failed, "; ")
			}
			rep.Checks = append(rep.Checks, r)
		}
		if o.db != "" {
			rep.Checks = append(rep.Checks, dbChecks(ctx, o.db, s, lr, runID, loadStart, c, dr.Deleted)...)
		} else {
			rep.Checks = append(rep.Checks, CheckResult{Name: "db checks", Detail: "skipped: no -db given"})
		}
	}
	for _, n := range srvs {
		n.stop()
	}
	if o.compare {
		rep.Compare = compare(ctx, o, rep, logf)
		if o.sameWork && srv != nil {
			cmp, t := sameWork(ctx, swEnv{o: o, bin: srv.bin, runID: runID, accts: s.Accounts}, rep.Throughput, logf)
			rep.Compare = append(rep.Compare, cmp)
			if t != nil {
				rep.Extra["sameWorkStatements"] = t.Describe()
				for _, l := range t.Describe() {
					logf("same-work: %s", l)
				}
			}
		}
	}
	rep.WriteText(stdout)
	if o.jsonOut != "" {
		f, err := os.Create(o.jsonOut)
		if err != nil {
			return 2, err
		}
		if err := rep.WriteJSON(f); err != nil {
			f.Close()
			return 2, err
		}
		if err := f.Close(); err != nil {
			return 2, err
		}
	}
	if rep.Failed() {
		return 1, nil
	}
	return 0, nil
}

// dbChecks runs every database-side invariant.
func dbChecks(ctx context.Context, dbURL string, s setupResult, lr loadResult, runID string, since time.Time,
	c *client, deleted []int) []CheckResult {
	fail := func(err error) []CheckResult { return []CheckResult{{Name: "db: open", Detail: err.Error()}} }
	chk, err := openDBChecker(ctx, dbURL)
	if err != nil {
		return fail(err)
	}
	defer chk.Close()
	out := append(chk.LedgerChecks(ctx), chk.TransactionCountChecks(ctx), chk.EventCountChecks(ctx))
	out = append(out, chk.cardDBChecks(ctx, s, lr.Cards)...)
	for _, e := range withCards(expectedTotals(s, lr.Acks, lr.Unresolved), lr.Cards) {
		total, err := chk.AccountsTotal(ctx, e.accountIDs)
		if err == nil {
			var susp int64
			susp, err = chk.SuspenseTotal(ctx, e.currency)
			total += susp
		}
		out = append(out, e.check("db", total, err))
	}
	if len(deleted) > 0 {
		out = append(out, deletedChecks(ctx, c, chk, s, deleted)...)
	}
	keys, err := chk.IdempotencyRecords(ctx, runID+"-q-")
	if err != nil {
		return append(out, CheckResult{Name: "db: idempotency keys", Detail: err.Error()})
	}
	quotes, err := chk.QuotesSince(ctx, since)
	if err != nil {
		return append(out, CheckResult{Name: "db: quotes", Detail: err.Error()})
	}
	outgoing, status, err := chk.OutgoingByQuote(ctx, since)
	if err != nil {
		return append(out, CheckResult{Name: "db: transactions", Detail: err.Error()})
	}
	return append(out, checkEffects(lr.Acks, lr.Unresolved, keys, quotes, outgoing, status)...)
}

func redact(u string) string {
	at := strings.Index(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	if user, _, ok := strings.Cut(u[scheme+3:at], ":"); ok {
		return u[:scheme+3] + user + ":***" + u[at:]
	}
	return u
}
