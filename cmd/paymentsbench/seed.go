package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// seedMain multiplies the transfers a real run made until the database
// holds about -transactions transactions, directly in SQL:
//
//	paymentsbench seed -db URL -transactions 1000000
//
// Each template is an internal transfer made through the API (its ledger
// transfer, postings, both transactions and its quote). Clone g gets ids
// suffixed ".g", times moved g steps into the past (over -span), and its
// postings negated when g is odd; the number of clones is even, so every
// balance is unchanged and still equals its postings, every cloned transfer
// still sums to zero, and the ledger audits. The statement buckets are then
// rebuilt from the postings. Events and webhook rows are not cloned.
func seedMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paymentsbench seed", flag.ContinueOnError)
	dbURL := fs.String("db", "", "database: sqlite:PATH or postgres://… (made by a run of paymentsbench)")
	target := fs.Int64("transactions", 1_000_000, "transactions the database should hold")
	span := fs.Duration("span", 30*24*time.Hour, "clones' created_at spread over this long before the templates")
	withQuotes := fs.Bool("quotes", true, "clone the quotes too")
	withEvents := fs.Bool("events", true, "clone the templates' events and their delivery rows too (GET /events)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("-db is required")
	}
	db, engine, err := openSQL(*dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	var have, templates int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM transactions").Scan(&have); err != nil {
		return err
	}
	// Templates: ledger transfers of executed quotes (not the fundings,
	// which are not seeded again).
	if _, err := db.ExecContext(ctx, `CREATE TEMPORARY TABLE seed_templates AS
		SELECT t.ledger_transfer_id AS ltid FROM transactions t
		WHERE t.transaction_type = 'OUTGOING' AND t.quote_id <> '' AND t.status = 'COMPLETED' AND t.ledger_transfer_id <> ''`); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM seed_templates").Scan(&templates); err != nil {
		return err
	}
	if templates == 0 {
		return errors.New("no completed quote transfers to use as templates: run paymentsbench on this database first")
	}
	var perTemplate int64
	if err := db.QueryRowContext(ctx, rebind(engine, `SELECT COUNT(*) FROM transactions WHERE ledger_transfer_id IN (SELECT ltid FROM seed_templates)`)).Scan(&perTemplate); err != nil {
		return err
	}
	rowsPerClone := perTemplate // transactions added per clone of every template
	k := int64(0)
	if *target > have {
		k = (*target - have + rowsPerClone - 1) / rowsPerClone
	}
	if k%2 == 1 {
		k++
	}
	fmt.Printf("database has %d transactions; %d templates (%d transactions each clone); %d clones of each\n",
		have, templates, rowsPerClone, k)
	if k == 0 {
		return nil
	}
	step := span.Microseconds() / k
	// The numbers 1..k.
	if _, err := db.ExecContext(ctx, "CREATE TEMPORARY TABLE seed_g (g BIGINT PRIMARY KEY)"); err != nil {
		return err
	}
	if engine == "postgres" {
		_, err = db.ExecContext(ctx, "INSERT INTO seed_g SELECT generate_series(1, $1::bigint)", k)
	} else {
		_, err = db.ExecContext(ctx, "WITH RECURSIVE n(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM n WHERE g < ?) INSERT INTO seed_g SELECT g FROM n", k)
	}
	if err != nil {
		return err
	}
	cols := func(table string) ([]string, error) {
		q := "SELECT name FROM pragma_table_info('" + table + "') ORDER BY cid"
		if engine == "postgres" {
			q = "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '" + table + "' ORDER BY ordinal_position"
		}
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, rows.Err()
	}
	suffix := "'.' || CAST(g AS TEXT)"
	shift := fmt.Sprintf("- g * %d", step)
	// clone copies rows of table selected by where, replacing the columns
	// in repl (a column's SQL expression over the row and g).
	clone := func(table, where string, repl map[string]string) error {
		cs, err := cols(table)
		if err != nil {
			return err
		}
		sel := make([]string, len(cs))
		for i, c := range cs {
			if e, ok := repl[c]; ok {
				sel[i] = e
			} else {
				sel[i] = "x." + c
			}
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s x CROSS JOIN seed_g WHERE %s",
			table, strings.Join(cs, ", "), strings.Join(sel, ", "), table, where)
		t0 := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, q)
		if err != nil {
			tx.Rollback() //nolint:errcheck
			return fmt.Errorf("%s: %w", table, err)
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		fmt.Printf("  %s: %d rows in %s\n", table, n, time.Since(t0).Round(time.Millisecond))
		return nil
	}
	if err := clone("ledger_transfers", "x.id IN (SELECT ltid FROM seed_templates)", map[string]string{
		"id": "x.id || " + suffix, "reference": "CASE WHEN x.reference <> '' THEN x.reference || " + suffix + " ELSE '' END",
		"created_at": "x.created_at " + shift,
	}); err != nil {
		return err
	}
	if err := clone("ledger_postings", "x.transfer_id IN (SELECT ltid FROM seed_templates)", map[string]string{
		"id": "x.id || " + suffix, "transfer_id": "x.transfer_id || " + suffix,
		"amount": "CASE WHEN g % 2 = 1 THEN -x.amount ELSE x.amount END", "created_at": "x.created_at " + shift,
	}); err != nil {
		return err
	}
	if err := rebuildBuckets(ctx, *dbURL); err != nil {
		return err
	}
	// A clone's id is stamped with its shifted created_at, as ids follow
	// creation time in a real database (the time filters' reads rely on it);
	// its quote and its events name it so.
	txnID := func(idCol string) string {
		return stampedID(engine, "Transaction", idCol, "(SELECT tt.created_at FROM transactions tt WHERE tt.id = "+idCol+") "+shift) +
			" || " + suffix
	}
	if err := clone("transactions", "x.ledger_transfer_id IN (SELECT ltid FROM seed_templates)", map[string]string{
		"id":                 stampedID(engine, "Transaction", "x.id", "x.created_at "+shift) + " || " + suffix,
		"ledger_transfer_id": "x.ledger_transfer_id || " + suffix,
		"quote_id":           "CASE WHEN x.quote_id <> '' THEN x.quote_id || " + suffix + " ELSE '' END",
		"created_at":         "x.created_at " + shift, "updated_at": "x.updated_at " + shift,
		"settled_at": "x.settled_at " + shift,
	}); err != nil {
		return err
	}
	if *withQuotes {
		if err := clone("quotes", "x.transaction_id IN "+templateTransactions, map[string]string{
			"id": "x.id || " + suffix, "transaction_id": txnID("x.transaction_id"),
			"created_at": "x.created_at " + shift, "updated_at": "x.updated_at " + shift,
			"expires_at": "x.expires_at " + shift, "executed_at": "x.executed_at " + shift,
		}); err != nil {
			return err
		}
	}
	if *withEvents {
		if err := cloneEvents(clone, engine, suffix, shift, txnID); err != nil {
			return err
		}
	}
	// The clones bypassed the store, which counts what it inserts.
	sdb, err := store.Open(ctx, *dbURL, store.Options{MaxConns: 1})
	if err != nil {
		return err
	}
	err = sdb.RebuildCounts(ctx)
	sdb.Close()
	if err != nil {
		return fmt.Errorf("counts: %w", err)
	}
	// Statistics for the planner, and on PostgreSQL the visibility map too:
	// a bulk load is vacuumed by autovacuum soon after (its insert
	// threshold), and a database that never was reads every row it counts
	// or sums from the heap, not from the covering indexes. VACUUM here
	// measures that steady state whether or not autovacuum is on (it is off
	// on the benchmark machine's PostgreSQL, docs/benchmarks.md).
	maintain := "ANALYZE"
	if engine == "postgres" {
		maintain = "VACUUM (ANALYZE)"
	}
	if _, err := db.ExecContext(ctx, maintain); err != nil {
		return err
	}
	// The seed leaves what it wrote in PostgreSQL's shared buffers, dirty,
	// or in SQLite's write-ahead log: write it out now, so the reads that
	// follow measure the data, not a checkpoint running under them (the scale
	// step's sync reaches neither; docs/benchmarks.md, "Twenty-seventh
	// session"). PostgreSQL's CHECKPOINT needs a superuser or pg_checkpoint.
	settle := "PRAGMA wal_checkpoint(TRUNCATE)"
	if engine == "postgres" {
		settle = "CHECKPOINT"
	}
	if _, err := db.ExecContext(ctx, settle); err != nil {
		return fmt.Errorf("%s: %w", settle, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM transactions").Scan(&have); err != nil {
		return err
	}
	fmt.Printf("database now has %d transactions (seeded in %s)\n", have, time.Since(start).Round(time.Second))
	return nil
}

// templateTransactions selects the ids of the template transactions (the
// originals: a clone's ledger transfer id carries its suffix).
const templateTransactions = "(SELECT id FROM transactions WHERE ledger_transfer_id IN (SELECT ltid FROM seed_templates))"

// cloneEvents clones the events of the template transactions (the
// originals: a clone's resource_id carries its suffix), named after their
// transaction's clone (txnID), and their delivery rows, so GET /events lists as many
// events a transaction as the load made. A clone's envelope is its
// template's, unchanged: the list reads it as stored. A clone's id is
// stamped with its shifted created_at, as the server stamps an event's
// (id.At), so the events' time filters read the seeded database as they
// would a real one (the id's first 48 bits, then its template's tail and
// the suffix).
func cloneEvents(clone func(table, where string, repl map[string]string) error, engine, suffix, shift string,
	txnID func(idCol string) string) error {
	if err := clone("events", "x.resource_id IN "+templateTransactions, map[string]string{
		"id": stampedID(engine, id.Event, "x.id", "x.created_at "+shift) + " || " + suffix, "resource_id": txnID("x.resource_id"),
		"created_at": "x.created_at " + shift,
	}); err != nil {
		return err
	}
	shifted := map[string]string{"event_id": stampedID(engine, id.Event, "x.event_id",
		"(SELECT e.created_at FROM events e WHERE e.id = x.event_id) "+shift) + " || " + suffix}
	for _, c := range []string{"window_start", "next_attempt_at", "delivered_at", "updated_at", "last_attempted_at"} {
		shifted[c] = "x." + c + " " + shift
	}
	return clone("webhook_deliveries", "x.event_id IN (SELECT id FROM events WHERE resource_id IN "+templateTransactions+")", shifted)
}

// stampedID is SQL for the id idCol (typ, ":" and a UUIDv7) with its
// 48-bit millisecond replaced by that of micros (microseconds since 1970),
// as id.At stamps one.
func stampedID(engine, typ, idCol, micros string) string {
	ms := "((" + micros + ") / 1000)"
	stamp := "printf('%08x-%04x', " + ms + " >> 16, " + ms + " & 65535)"
	if engine == "postgres" {
		stamp = "lpad(to_hex(" + ms + " >> 16), 8, '0') || '-' || lpad(to_hex(" + ms + " & 65535), 4, '0')"
	}
	return "'" + typ + ":' || " + stamp + " || substr(" + idCol + ", " + strconv.Itoa(len(typ)+15) + ")"
}

// rebuildBuckets recomputes the statement buckets, which the cloned
// postings bypassed.
func rebuildBuckets(ctx context.Context, dbURL string) error {
	t0 := time.Now()
	st, err := store.Open(ctx, dbURL, store.Options{MaxConns: 1})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RebuildLedgerPostingBuckets(ctx); err != nil {
		return fmt.Errorf("ledger_posting_buckets: %w", err)
	}
	fmt.Printf("  ledger_posting_buckets: rebuilt in %s\n", time.Since(t0).Round(time.Millisecond))
	return nil
}

// readsMain spawns paymentsd on an existing database and times the first
// pages of GET /transactions and of the busiest account's balance changes.
//
//	paymentsbench reads -db URL [-n 200] [-json FILE]
func readsMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paymentsbench reads", flag.ContinueOnError)
	dbURL := fs.String("db", "", "database: sqlite:PATH or postgres://…")
	bin := fs.String("bin", "", "paymentsd binary (default: go build ./cmd/paymentsd)")
	n := fs.Int("n", 200, "requests of each kind")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("-db is required")
	}
	db, engine, err := openSQL(*dbURL)
	if err != nil {
		return err
	}
	var acct string
	var postings, txns, evs int64
	err = db.QueryRowContext(ctx, `SELECT ia.id, COUNT(*) FROM internal_accounts ia JOIN ledger_postings p ON p.account_id = ia.ledger_account_id
		GROUP BY ia.id ORDER BY COUNT(*) DESC LIMIT 1`).Scan(&acct, &postings)
	if err == nil {
		err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM transactions").Scan(&txns)
	}
	if err == nil {
		err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&evs)
	}
	db.Close()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "paymentsbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		if *bin, err = buildServer(ctx, tmp); err != nil {
			return err
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	lf, err := os.Create(filepath.Join(tmp, "paymentsd.log"))
	if err != nil {
		return err
	}
	defer lf.Close()
	creds := "reads-" + randHex(4) + ":" + randHex(16)
	srv := &server{bin: *bin, dbURL: *dbURL, creds: creds, addr: addr, logw: lf}
	startAt := time.Now()
	if err := srv.start(ctx); err != nil {
		return err
	}
	defer srv.stop()
	ready := time.Since(startAt)
	time.Sleep(300 * time.Millisecond) // let the RSS sampler see the started process
	c := newClient(srv.URL(), creds, 4)
	type result struct {
		Engine            string  `json:"engine"`
		Transactions      int64   `json:"transactions"`
		AccountPostings   int64   `json:"accountPostings"`
		StartupSeconds    float64 `json:"startupSeconds"`
		ListFirstPage     Latency `json:"listTransactionsFirstPage"`
		ListSecondPage    Latency `json:"listTransactionsSecondPage"`
		ListByAccount     Latency `json:"listTransactionsByCustomerFirstPage"`
		ListByStatus      Latency `json:"listTransactionsByStatusFirstPage"`
		ListByType        Latency `json:"listTransactionsByTypeFirstPage"`
		ListLastHour      Latency `json:"listTransactionsLastHourFirstPage"`
		ListOneDay        Latency `json:"listTransactionsOneDayWeekAgoFirstPage"`
		StatementAllTime  Latency `json:"balanceChangesAllTimeFirstPage"`
		StatementOneDay   Latency `json:"balanceChangesLastDayFirstPage"`
		Events            int64   `json:"events"`
		EventsFirstPage   Latency `json:"listEventsFirstPage"`
		EventsSecondPage  Latency `json:"listEventsSecondPage"`
		EventsByType      Latency `json:"listEventsByTypeFirstPage"`
		EventsLastHour    Latency `json:"listEventsLastHourFirstPage"`
		PeakRSSBytes      int64   `json:"serverPeakRssBytes"`
		PeakRSSIdleBytes  int64   `json:"serverPeakRssAfterStartBytes"`
		TotalCountMatches bool    `json:"totalCountMatches"`
	}
	r := result{Engine: engine, Transactions: txns, Events: evs, AccountPostings: postings, StartupSeconds: ready.Seconds(), PeakRSSIdleBytes: srv.PeakRSS()}
	var custID string
	// Warm up (and check the account answers).
	if err := c.must(ctx, "GET", "/internal-accounts/"+acct+"/balance-changes?"+url.Values{
		"startDate": {"2020-01-01T00:00:00Z"}, "endDate": {"2020-01-02T00:00:00Z"}}.Encode(), nil, http.StatusOK, nil); err != nil {
		return err
	}
	var first struct {
		TotalCount int64  `json:"totalCount"`
		NextCursor string `json:"nextCursor"`
		Data       []struct {
			CustomerID string `json:"customerId"`
		} `json:"data"`
	}
	if err := c.must(ctx, "GET", "/transactions?limit=20", nil, http.StatusOK, &first); err != nil {
		return err
	}
	r.TotalCountMatches = first.TotalCount == txns
	for _, d := range first.Data {
		if d.CustomerID != "" {
			custID = d.CustomerID
			break
		}
	}
	end := time.Now().Add(-6 * time.Second).UTC()
	timeIt := func(path string) (Latency, error) {
		ds := make([]time.Duration, 0, *n)
		for i := 0; i < *n; i++ {
			t0 := time.Now()
			if err := c.must(ctx, "GET", path, nil, http.StatusOK, nil); err != nil {
				return Latency{}, err
			}
			ds = append(ds, time.Since(t0))
		}
		return Summarise(ds), nil
	}
	if r.ListFirstPage, err = timeIt("/transactions?limit=20"); err != nil {
		return err
	}
	if r.ListSecondPage, err = timeIt("/transactions?limit=20&cursor=" + url.QueryEscape(first.NextCursor)); err != nil {
		return err
	}
	if custID != "" {
		if r.ListByAccount, err = timeIt("/transactions?limit=20&customerId=" + custID); err != nil {
			return err
		}
	}
	// Filtered by a status and by a type, each matching about all or half
	// of the rows: the filters a platform reaches for first.
	if r.ListByStatus, err = timeIt("/transactions?limit=20&status=COMPLETED"); err != nil {
		return err
	}
	if r.ListByType, err = timeIt("/transactions?limit=20&type=OUTGOING"); err != nil {
		return err
	}
	// Created in the last hour (the recent ones), and on one day a week
	// back (a reconciliation's window).
	if r.ListLastHour, err = timeIt("/transactions?limit=20&createdAfter=" + url.QueryEscape(end.Add(-time.Hour).Format(time.RFC3339Nano))); err != nil {
		return err
	}
	if r.ListOneDay, err = timeIt("/transactions?limit=20&" + url.Values{"createdAfter": {end.Add(-8 * 24 * time.Hour).Format(time.RFC3339Nano)},
		"createdBefore": {end.Add(-7 * 24 * time.Hour).Format(time.RFC3339Nano)}}.Encode()); err != nil {
		return err
	}
	if r.StatementAllTime, err = timeIt("/internal-accounts/" + acct + "/balance-changes?" + url.Values{
		"startDate": {"2020-01-01T00:00:00Z"}, "endDate": {end.Format(time.RFC3339Nano)}, "limit": {"20"}}.Encode()); err != nil {
		return err
	}
	if r.StatementOneDay, err = timeIt("/internal-accounts/" + acct + "/balance-changes?" + url.Values{
		"startDate": {end.Add(-24 * time.Hour).Format(time.RFC3339Nano)}, "endDate": {end.Format(time.RFC3339Nano)}, "limit": {"20"}}.Encode()); err != nil {
		return err
	}
	if err := timeEvents(ctx, c, timeIt, end.Add(-time.Hour), &r.EventsFirstPage, &r.EventsSecondPage, &r.EventsByType,
		&r.EventsLastHour); err != nil {
		return err
	}
	r.PeakRSSBytes = srv.PeakRSS()
	fmt.Printf("%s: %d transactions; busiest account %d postings; ready in %.1fs\n", engine, txns, postings, r.StartupSeconds)
	p := func(name string, l Latency) {
		fmt.Printf("  %-48s p50 %7.2f  p95 %7.2f  p99 %7.2f ms\n", name, l.P50, l.P95, l.P99)
	}
	p("GET /transactions?limit=20 (first page)", r.ListFirstPage)
	p("GET /transactions?limit=20&cursor= (second page)", r.ListSecondPage)
	p("GET /transactions?limit=20&customerId=", r.ListByAccount)
	p("GET /transactions?limit=20&status=COMPLETED", r.ListByStatus)
	p("GET /transactions?limit=20&type=OUTGOING", r.ListByType)
	p("GET /transactions?limit=20&createdAfter= (1 h)", r.ListLastHour)
	p("GET /transactions, created on a day a week ago", r.ListOneDay)
	p("balance-changes, all time, limit 20", r.StatementAllTime)
	p("balance-changes, last 24 h, limit 20", r.StatementOneDay)
	fmt.Printf("  %d events\n", r.Events)
	p("GET /events?limit=20 (first page)", r.EventsFirstPage)
	p("GET /events?limit=20&cursor= (second page)", r.EventsSecondPage)
	p("GET /events?limit=20&type=", r.EventsByType)
	p("GET /events?limit=20&createdAfter= (last hour)", r.EventsLastHour)
	fmt.Printf("  totalCount matches: %v; server peak RSS %.1f MiB (%.1f MiB after start)\n",
		r.TotalCountMatches, float64(r.PeakRSSBytes)/(1<<20), float64(r.PeakRSSIdleBytes)/(1<<20))
	if *jsonOut != "" {
		rep := &Report{Engine: engine, Extra: map[string]any{"reads": r}}
		f, err := os.Create(*jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		return rep.WriteJSON(f)
	}
	return nil
}

// timeEvents times GET /events: its first page, the page after it, the
// first page of one type (the first listed event's), and the first page of
// the events created since since (a webhook consumer's catch-up).
func timeEvents(ctx context.Context, c *client, timeIt func(string) (Latency, error), since time.Time,
	first, second, byType, window *Latency) error {
	var page struct {
		NextCursor string `json:"nextCursor"`
		Data       []struct {
			Type string `json:"type"`
		} `json:"data"`
	}
	if err := c.must(ctx, "GET", "/events?limit=20", nil, http.StatusOK, &page); err != nil {
		return err
	}
	if len(page.Data) == 0 {
		return errors.New("GET /events: no events")
	}
	var err error
	if *first, err = timeIt("/events?limit=20"); err != nil {
		return err
	}
	if page.NextCursor != "" {
		if *second, err = timeIt("/events?limit=20&cursor=" + url.QueryEscape(page.NextCursor)); err != nil {
			return err
		}
	}
	if *byType, err = timeIt("/events?limit=20&type=" + url.QueryEscape(page.Data[0].Type)); err != nil {
		return err
	}
	*window, err = timeIt("/events?limit=20&createdAfter=" + url.QueryEscape(since.Format(time.RFC3339Nano)))
	return err
}

// auditMain runs the database-side ledger invariants on any database:
//
//	paymentsbench audit -db URL
func auditMain(ctx context.Context, args []string) (bool, error) {
	fs := flag.NewFlagSet("paymentsbench audit", flag.ContinueOnError)
	dbURL := fs.String("db", "", "database: sqlite:PATH or postgres://…")
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	chk, err := openDBChecker(ctx, *dbURL)
	if err != nil {
		return false, err
	}
	defer chk.Close()
	r := &Report{Engine: chk.engine, Checks: append(chk.LedgerChecks(ctx), chk.TransactionCountChecks(ctx), chk.EventCountChecks(ctx))}
	for _, c := range r.Checks {
		status := "PASS"
		if !c.Pass {
			status = "FAIL"
		}
		fmt.Printf("%s %s %s\n", status, c.Name, c.Detail)
	}
	return !r.Failed(), nil
}
