package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver
	_ "modernc.org/sqlite"             // "sqlite" driver
)

// openSQL opens the server's database for reading with database/sql.
func openSQL(dbURL string) (*sql.DB, string, error) {
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		path = strings.TrimPrefix(path, "//")
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
		return db, "sqlite", err
	}
	db, err := sql.Open("pgx", dbURL)
	return db, "postgres", err
}

// rebind turns ? placeholders into $n for PostgreSQL.
func rebind(engine, q string) string {
	if engine != "postgres" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// dbChecker runs the invariants directly against the database.
type dbChecker struct {
	db       *sql.DB
	engine   string
	platform string
	env      string
}

// openDBChecker opens dbURL for the checks; Close it when done.
func openDBChecker(ctx context.Context, dbURL string) (*dbChecker, error) {
	db, engine, err := openSQL(dbURL)
	if err != nil {
		return nil, err
	}
	c := &dbChecker{db: db, engine: engine, env: "sandbox"}
	if err := db.QueryRowContext(ctx, "SELECT id FROM platforms WHERE is_default").Scan(&c.platform); err != nil {
		db.Close()
		return nil, fmt.Errorf("default platform: %w", err)
	}
	return c, nil
}

// pendingDeliveries counts the webhook deliveries not yet made (state
// PENDING, and the events a hand-over journal row names that have no
// delivery row yet), or returns -1 without a database to read.
func pendingDeliveries(ctx context.Context, dbURL string) int64 {
	if dbURL == "" {
		return -1
	}
	db, engine, err := openSQL(dbURL)
	if err != nil {
		return -1
	}
	defer db.Close()
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'PENDING'").Scan(&n); err != nil {
		return -1
	}
	handed, err := handedWithoutRows(ctx, db, engine)
	if err != nil {
		return -1
	}
	return n + handed
}

// handedWithoutRows counts the events named by webhook_handoffs rows (the
// hand-over journal, migration 0064) that have no delivery row: handed
// over to a node that has not written their outcomes, or died first.
func handedWithoutRows(ctx context.Context, db *sql.DB, engine string) (int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT event_ids FROM webhook_handoffs")
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var names string
		if err := rows.Scan(&names); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, strings.Split(names, ",")...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var without int64
	for _, id := range ids {
		var one int
		err := db.QueryRowContext(ctx, rebind(engine, "SELECT 1 FROM webhook_deliveries WHERE event_id = ?"), id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			without++
		} else if err != nil {
			return 0, err
		}
	}
	return without, nil
}

// Close releases the checker's connections.
func (c *dbChecker) Close() error { return c.db.Close() }

func (c *dbChecker) count(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := c.db.QueryRowContext(ctx, rebind(c.engine, q), args...).Scan(&n)
	return n, err
}

// danglingCheck names the check that every ledger reference resolves.
const danglingCheck = "db: every posting's transfer and account, and every transaction's ledger transfer, exist"

// LedgerChecks: every transfer sums to zero per currency, every reference
// to a transfer or an account resolves, every balance
// row equals its posted postings, no INTERNAL account is negative, the
// posted postings of each currency sum to zero, and every statement bucket
// equals its postings.
func (c *dbChecker) LedgerChecks(ctx context.Context) []CheckResult {
	var out []CheckResult
	add := func(name string, n int64, err error, what string) {
		switch {
		case err != nil:
			out = append(out, CheckResult{Name: name, Detail: err.Error()})
		case n != 0:
			out = append(out, CheckResult{Name: name, Detail: fmt.Sprintf("%d %s", n, what)})
		default:
			out = append(out, CheckResult{Name: name, Pass: true})
		}
	}
	n, err := c.count(ctx, `SELECT COUNT(*) FROM (SELECT transfer_id, currency FROM ledger_postings
		WHERE platform_id = ? AND env = ? GROUP BY transfer_id, currency HAVING SUM(amount) <> 0) x`, c.platform, c.env)
	add("db: every ledger transfer sums to zero per currency", n, err, "unbalanced transfer/currency pairs")
	// PostgreSQL has no foreign keys from postings and transactions rows to
	// their transfers and accounts (migration 0061): the code keeps them.
	n, err = c.count(ctx, `SELECT (SELECT COUNT(*) FROM ledger_postings p
			WHERE p.platform_id = ? AND p.env = ? AND (
				NOT EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = p.transfer_id) OR
				NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = p.account_id)))
		+ (SELECT COUNT(*) FROM transactions x WHERE x.platform_id = ? AND x.env = ? AND x.ledger_transfer_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = x.ledger_transfer_id))`, c.platform, c.env, c.platform, c.env)
	add(danglingCheck, n, err, "postings or transactions refer to a missing transfer or account")
	n, err = c.count(ctx, `SELECT COUNT(*) FROM ledger_balances b
		LEFT JOIN (SELECT account_id, SUM(amount) AS s FROM ledger_postings
		           WHERE platform_id = ? AND env = ? AND NOT pending GROUP BY account_id) p ON p.account_id = b.account_id
		WHERE b.platform_id = ? AND b.env = ? AND b.posted <> COALESCE(p.s, 0)`, c.platform, c.env, c.platform, c.env)
	add("db: every balance row equals the sum of its postings", n, err, "balance rows differ from their postings")
	n, err = c.count(ctx, `SELECT COUNT(*) FROM ledger_balances b JOIN ledger_accounts a ON a.id = b.account_id
		WHERE b.platform_id = ? AND b.env = ? AND a.kind = 'INTERNAL' AND b.posted - b.pending_debits < 0`, c.platform, c.env)
	add("db: no INTERNAL balance negative", n, err, "negative INTERNAL balances")
	n, err = c.count(ctx, `SELECT COUNT(*) FROM (SELECT currency FROM ledger_postings
		WHERE platform_id = ? AND env = ? AND NOT pending GROUP BY currency HAVING SUM(amount) <> 0) x`, c.platform, c.env)
	add("db: posted postings sum to zero per currency (money conserved in the ledger)", n, err, "currencies do not sum to zero")
	// The same buckets as migration 0013 and store.RebuildLedgerPostingBuckets.
	n, err = c.count(ctx, `SELECT COUNT(*) FROM (SELECT account_id, span, bucket_start FROM (
			SELECT k.account_id, k.span, k.bucket_start, k.amount AS stored, 0 AS summed
			FROM ledger_posting_buckets k JOIN ledger_accounts a ON a.id = k.account_id
			WHERE a.platform_id = ? AND a.env = ?
			UNION ALL
			SELECT p.account_id, s.span, p.created_at - ((p.created_at % s.span) + s.span) % s.span, 0, p.amount
			FROM ledger_postings p JOIN ledger_balances b ON b.account_id = p.account_id
			CROSS JOIN (SELECT 3600000000 AS span UNION ALL SELECT 86400000000) s
			WHERE NOT p.pending AND p.platform_id = ? AND p.env = ?
		) u GROUP BY account_id, span, bucket_start HAVING SUM(stored) <> SUM(summed)) x`, c.platform, c.env, c.platform, c.env)
	add("db: statement buckets equal the sums of their postings", n, err, "buckets differ from their postings")
	return out
}

// TransactionCountChecks: the counters behind totalCount of GET
// /transactions (transaction_counts, summed over shards) equal COUNT(*) of
// the transactions of every tenant, of every customer and of every platform's
// own, by type and status, on all tenants.
func (c *dbChecker) TransactionCountChecks(ctx context.Context) CheckResult {
	return c.counterCheck(ctx, "db: transaction counters equal COUNT(*) per tenant, per customer and for the platform, by type and status", "scopes",
		`WITH t AS (
			SELECT platform_id, env, customer_id, transaction_type AS k, status, COUNT(*) AS c FROM transactions
			GROUP BY platform_id, env, customer_id, transaction_type, status),
		d AS (
			SELECT platform_id, env, scope, transaction_type AS k, status, n FROM transaction_counts
			UNION ALL SELECT platform_id, env, 'all', k, status, -c FROM t
			UNION ALL SELECT platform_id, env, CASE WHEN customer_id IS NULL THEN 'platform' ELSE 'customer:' || customer_id END,
				k, status, -c FROM t)
		SELECT platform_id, env, scope || ' ' || k || ' ' || status, CAST(SUM(n) AS BIGINT) FROM d
		GROUP BY platform_id, env, scope, k, status HAVING SUM(n) <> 0`)
}

// EventCountChecks: the counters behind totalCount of GET /events
// (store/event_counts.go) equal COUNT(*) of the events of every tenant and
// type.
func (c *dbChecker) EventCountChecks(ctx context.Context) CheckResult {
	return c.counterCheck(ctx, "db: event counters equal COUNT(*) per tenant and type", "types", `WITH d AS (
			SELECT platform_id, env, type, n FROM event_counts
			UNION ALL SELECT platform_id, env, type, -COUNT(*) FROM events GROUP BY platform_id, env, type)
		SELECT platform_id, env, type, CAST(SUM(n) AS BIGINT) FROM d GROUP BY platform_id, env, type HAVING SUM(n) <> 0`)
}

// counterCheck passes when query, which gives each counter that differs from
// its rows' count (platform, environment, key, difference), gives none; keys
// names the keys in its detail.
func (c *dbChecker) counterCheck(ctx context.Context, name, keys, query string) CheckResult {
	r := CheckResult{Name: name}
	rows, err := c.db.QueryContext(ctx, query)
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	defer rows.Close()
	bad, example := 0, ""
	for rows.Next() {
		var p, e, key string
		var diff int64
		if err := rows.Scan(&p, &e, &key, &diff); err != nil {
			r.Detail = err.Error()
			return r
		}
		bad++
		example = fmt.Sprintf("%s/%s %s counts %+d", p, e, key, diff)
	}
	if err := rows.Err(); err != nil {
		r.Detail = err.Error()
		return r
	}
	r.Pass = bad == 0
	if bad > 0 {
		r.Detail = fmt.Sprintf("%d %s differ, e.g. %s", bad, keys, example)
	}
	return r
}

// AccountsTotal sums the posted balances of the given internal accounts.
func (c *dbChecker) AccountsTotal(ctx context.Context, accountIDs []string) (int64, error) {
	return c.accountsSum(ctx, accountIDs, "b.posted")
}

// PendingDebits sums what the given internal accounts hold (pending debits).
func (c *dbChecker) PendingDebits(ctx context.Context, accountIDs []string) (int64, error) {
	return c.accountsSum(ctx, accountIDs, "b.pending_debits")
}

// accountsSum sums a ledger_balances column (a constant expression of the
// callers) over the given internal accounts.
func (c *dbChecker) accountsSum(ctx context.Context, accountIDs []string, col string) (int64, error) {
	var total int64
	for i := 0; i < len(accountIDs); i += 500 {
		chunk := accountIDs[i:min(i+500, len(accountIDs))]
		args := []any{c.platform, c.env}
		for _, id := range chunk {
			args = append(args, id)
		}
		q := `SELECT COALESCE(SUM(` + col + `), 0) FROM internal_accounts ia JOIN ledger_balances b ON b.account_id = ia.ledger_account_id
			WHERE ia.platform_id = ? AND ia.env = ? AND ia.id IN (?` + strings.Repeat(",?", len(chunk)-1) + `)`
		var s int64
		if err := c.db.QueryRowContext(ctx, rebind(c.engine, q), args...).Scan(&s); err != nil {
			return 0, err
		}
		total += s
	}
	return total, nil
}

// idemRecord is what the database says one Idempotency-Key did.
type idemRecord struct {
	Status  int
	QuoteID string
}

// IdempotencyRecords reads the keys starting with prefix.
func (c *dbChecker) IdempotencyRecords(ctx context.Context, prefix string) (map[string]idemRecord, error) {
	rows, err := c.db.QueryContext(ctx, rebind(c.engine, `SELECT idem_key, status_code, COALESCE(response_body, '')
		FROM idempotency_keys WHERE platform_id = ? AND env = ? AND idem_key LIKE ?`), c.platform, c.env, prefix+"%")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]idemRecord{}
	for rows.Next() {
		var key, body string
		var rec idemRecord
		if err := rows.Scan(&key, &rec.Status, &body); err != nil {
			return nil, err
		}
		var q struct {
			ID string `json:"id"`
		}
		if rec.Status == http.StatusOK && json.Unmarshal([]byte(body), &q) == nil {
			rec.QuoteID = q.ID
		}
		out[key] = rec
	}
	return out, rows.Err()
}

// QuotesSince lists the ids of quotes created at or after since.
func (c *dbChecker) QuotesSince(ctx context.Context, since time.Time) (map[string]bool, error) {
	rows, err := c.db.QueryContext(ctx, rebind(c.engine, `SELECT id FROM quotes WHERE platform_id = ? AND env = ? AND created_at >= ?`),
		c.platform, c.env, since.UnixMicro())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// OutgoingByQuote counts OUTGOING transactions per quote id, and the
// statuses seen, for quotes created at or after since.
func (c *dbChecker) OutgoingByQuote(ctx context.Context, since time.Time) (map[string]int, map[string]string, error) {
	rows, err := c.db.QueryContext(ctx, rebind(c.engine, `SELECT quote_id, status FROM transactions
		WHERE platform_id = ? AND env = ? AND transaction_type = 'OUTGOING' AND quote_id <> '' AND created_at >= ?`),
		c.platform, c.env, since.UnixMicro())
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	counts, status := map[string]int{}, map[string]string{}
	for rows.Next() {
		var q, s string
		if err := rows.Scan(&q, &s); err != nil {
			return nil, nil, err
		}
		counts[q]++
		status[q] = s
	}
	return counts, status, rows.Err()
}

// checkEffects compares what the clients were told with what the database
// holds: each acknowledged quote exists exactly once with one OUTGOING
// transaction in its final status (ack.finalStatus), each key recorded at most one quote (the one the
// client saw), and no quote of the run lacks a key (an effect nobody can
// replay). It is pure, for tests.
func checkEffects(acks []ack, unresolved int64, keys map[string]idemRecord, quotes map[string]bool,
	outgoing map[string]int, status map[string]string) []CheckResult {
	var out []CheckResult
	res := func(name string, bad int, example string) {
		r := CheckResult{Name: name, Pass: bad == 0}
		if bad != 0 {
			r.Detail = fmt.Sprintf("%d violations, e.g. %s", bad, example)
		}
		out = append(out, r)
	}
	// Each acknowledged transfer is present exactly once, in its final status.
	bad, ex := 0, ""
	for _, a := range acks {
		if !quotes[a.QuoteID] || outgoing[a.QuoteID] != 1 || status[a.QuoteID] != a.finalStatus() {
			bad++
			ex = fmt.Sprintf("%s (quote present %v, %d transactions, status %q, want %s)", a.QuoteID, quotes[a.QuoteID],
				outgoing[a.QuoteID], status[a.QuoteID], a.finalStatus())
		}
	}
	res(fmt.Sprintf("db: each of %d acknowledged transfers present exactly once, in its final status", len(acks)), bad, ex)

	// Each key has at most one effect, and it is the one the client saw.
	bad, ex = 0, ""
	byQuote := map[string]int{}
	for k, r := range keys {
		if r.QuoteID != "" {
			byQuote[r.QuoteID]++
			if byQuote[r.QuoteID] == 2 {
				bad++
				ex = "quote " + r.QuoteID + " recorded under two keys, one is " + k
			}
		}
	}
	for _, a := range acks {
		if r, ok := keys[a.Key]; !ok || r.QuoteID != a.QuoteID {
			bad++
			ex = fmt.Sprintf("key %s: client saw %s, database recorded %q", a.Key, a.QuoteID, r.QuoteID)
		}
	}
	for q := range quotes {
		if byQuote[q] == 0 {
			bad++
			ex = "quote " + q + " has no Idempotency-Key record (an effect without a replayable answer)"
		}
	}
	for q, n := range outgoing {
		if n > 1 {
			bad++
			ex = fmt.Sprintf("quote %s has %d OUTGOING transactions", q, n)
		}
	}
	res(fmt.Sprintf("db: each Idempotency-Key has at most one effect (%d keys, %d quotes)", len(keys), len(quotes)), bad, ex)

	// Counts: quotes of the run == acknowledged (+ at most the unresolved).
	extra := int64(len(quotes)) - int64(len(acks))
	r := CheckResult{Name: fmt.Sprintf("db: quotes of the run (%d) == acknowledged (%d)", len(quotes), len(acks))}
	r.Pass = extra == 0 || (extra > 0 && extra <= unresolved)
	if !r.Pass {
		r.Detail = fmt.Sprintf("difference %d, unresolved %d", extra, unresolved)
	} else if extra > 0 {
		r.Detail = fmt.Sprintf("%d unresolved requests committed without the client learning it", extra)
	}
	out = append(out, r)
	return out
}

// apiChecks checks through the public API: the accounts' balances sum to
// what was funded, a sample of acknowledged transactions read COMPLETED,
// and statements add up.
func apiChecks(ctx context.Context, c *client, s setupResult, acks []ack, unresolved int64, sample int, window [2]time.Time, cards *cardResult) []CheckResult {
	var out []CheckResult
	// Conservation over the run's accounts, per currency.
	// Money that had to arrive for a customer deleted since is in the
	// platform's suspense account (0 when there is none): counted too, so
	// every cent is visible through the API.
	for _, e := range withCards(expectedTotals(s, acks, unresolved), cards) {
		total, err := apiAccountsTotal(ctx, c, s, e.currency)
		if err == nil {
			var susp int64
			susp, err = suspenseTotal(ctx, c, e.currency)
			total += susp
		}
		out = append(out, e.check("api", total, err))
	}

	// A sample of acknowledged transactions.
	step := 1
	if sample > 0 && len(acks) > sample {
		step = len(acks) / sample
	}
	bad, n, ex := 0, 0, ""
	for i := 0; i < len(acks); i += step {
		n++
		var tx struct {
			Status  string `json:"status"`
			QuoteID string `json:"quoteId"`
		}
		if err := c.must(ctx, "GET", "/transactions/"+acks[i].TransactionID, nil, http.StatusOK, &tx); err != nil {
			bad++
			ex = err.Error()
			continue
		}
		if tx.Status != acks[i].finalStatus() || tx.QuoteID != acks[i].QuoteID {
			bad++
			ex = fmt.Sprintf("%s: status %s quote %s", acks[i].TransactionID, tx.Status, tx.QuoteID)
		}
	}
	r := CheckResult{Name: fmt.Sprintf("api: %d sampled acknowledged transactions in their final status with their quote", n), Pass: bad == 0}
	if bad > 0 {
		r.Detail = fmt.Sprintf("%d bad, e.g. %s", bad, ex)
	}
	out = append(out, r)
	out = append(out, cardAPIChecks(ctx, c, cards)...)

	// Statements of a few accounts: opening + Σ changes == closing.
	for i := 0; i < min(3, len(s.Accounts)); i++ {
		a := s.Accounts[i*len(s.Accounts)/3]
		open, sum, closing, pages, err := statementSum(ctx, c, a.AccountID, window[0], window[1])
		r := CheckResult{Name: fmt.Sprintf("api: statement of %s: opening + Σ changes == closing", a.AccountID)}
		switch {
		case err != nil:
			r.Detail = err.Error()
		case open+sum != closing:
			r.Detail = fmt.Sprintf("opening %d + Σ %d != closing %d (%d pages)", open, sum, closing, pages)
		default:
			r.Pass = true
			r.Detail = fmt.Sprintf("%d + %d = %d over %d pages", open, sum, closing, pages)
		}
		out = append(out, r)
	}
	return out
}

// awaitPayouts polls the acknowledged payouts' transactions through the API
// until each is in its final status or timeout has passed; it returns how
// many are. The sandbox's ACH takes about 3 s, and a return as long again.
func awaitPayouts(ctx context.Context, c *client, acks []ack, timeout time.Duration) (int, error) {
	var waiting []ack
	total := 0
	for _, a := range acks {
		if a.Payout {
			waiting = append(waiting, a)
			total++
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		left := waiting[:0]
		for _, a := range waiting {
			var tx struct {
				Status string `json:"status"`
			}
			if err := c.must(ctx, "GET", "/transactions/"+a.TransactionID, nil, http.StatusOK, &tx); err != nil {
				return total - len(waiting), err
			}
			if tx.Status != a.finalStatus() {
				left = append(left, a)
			}
		}
		waiting = left
		if len(waiting) == 0 {
			return total, nil
		}
		if time.Now().After(deadline) {
			return total - len(waiting), fmt.Errorf("%d not final after %s, e.g. %s", len(waiting), timeout, waiting[0].TransactionID)
		}
		select {
		case <-ctx.Done():
			return total - len(waiting), ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// statementSum pages through an account's balance changes in a window.
func statementSum(ctx context.Context, c *client, accountID string, start, end time.Time) (open, sum, closing int64, pages int, err error) {
	cursor := ""
	for {
		q := url.Values{"startDate": {start.UTC().Format(time.RFC3339Nano)}, "endDate": {end.UTC().Format(time.RFC3339Nano)}, "limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var st struct {
			Data []struct {
				Amount int64 `json:"amount"`
			} `json:"data"`
			OpeningBalance int64  `json:"openingBalance"`
			ClosingBalance int64  `json:"closingBalance"`
			HasMore        bool   `json:"hasMore"`
			NextCursor     string `json:"nextCursor"`
		}
		if err = c.must(ctx, "GET", "/internal-accounts/"+accountID+"/balance-changes?"+q.Encode(), nil, http.StatusOK, &st); err != nil {
			return
		}
		if pages == 0 {
			open, closing = st.OpeningBalance, st.ClosingBalance
		}
		pages++
		for _, d := range st.Data {
			sum += d.Amount
		}
		if !st.HasMore || st.NextCursor == "" {
			return
		}
		cursor = st.NextCursor
	}
}

// expected is what the run's accounts in one currency must hold after the
// load.
type expected struct {
	currency   string
	accountIDs []string
	want       int64
	note       string // why the figure may be inexact
}

// expectedTotals: the USD accounts hold what was funded less what
// cross-currency transfers and completed payouts sent (their
// totalSendingAmount, fees included; a failed or returned payout is refunded
// in full); the EUR accounts, when the run made them, what the cross-currency
// transfers delivered. Same-currency transfers move money between the run's
// own accounts.
func expectedTotals(s setupResult, acks []ack, unresolved int64) []expected {
	usd := expected{currency: "USD", want: s.TotalFunded}
	eur := expected{currency: "EUR"}
	fx := false
	for _, a := range s.Accounts {
		usd.accountIDs = append(usd.accountIDs, a.AccountID)
		if a.EURAccountID != "" {
			eur.accountIDs = append(eur.accountIDs, a.EURAccountID)
			fx = true
		}
	}
	leaves := false // some money leaves the run's USD accounts
	for _, a := range acks {
		switch {
		case a.FX:
			usd.want -= a.Sent
			eur.want += a.Received
		case a.Payout && a.finalStatus() == "COMPLETED":
			usd.want -= a.Sent
		}
		leaves = leaves || a.FX || a.Payout
	}
	if unresolved > 0 && leaves {
		// An unresolved cross-currency transfer or payout may have
		// committed: its amounts are unknown to the client.
		usd.note = fmt.Sprintf("; %d unresolved requests make this inexact", unresolved)
		eur.note = usd.note
	}
	if !fx {
		return []expected{usd}
	}
	return []expected{usd, eur}
}

func (e expected) check(where string, total int64, err error) CheckResult {
	r := CheckResult{Name: fmt.Sprintf("%s: sum of the run's %d %s balances + %s suspense == %d", where, len(e.accountIDs),
		e.currency, e.currency, e.want)}
	switch {
	case err != nil:
		r.Detail = err.Error()
	case total != e.want:
		r.Detail = fmt.Sprintf("sum is %d (%+d)%s", total, total-e.want, e.note)
	default:
		r.Pass = true
	}
	return r
}

// apiAccountsTotal sums, through the API, the balances of the run's accounts
// in currency.
func apiAccountsTotal(ctx context.Context, c *client, s setupResult, currency string) (int64, error) {
	var total int64
	for _, a := range s.Accounts {
		want := a.AccountID
		if currency == "EUR" {
			want = a.EURAccountID
		}
		var list struct {
			Data []struct {
				ID      string `json:"id"`
				Balance struct {
					Amount int64 `json:"amount"`
				} `json:"balance"`
			} `json:"data"`
		}
		if err := c.must(ctx, "GET", "/customers/internal-accounts?currency="+currency+"&customerId="+a.CustomerID, nil, http.StatusOK, &list); err != nil {
			return 0, err
		}
		for _, x := range list.Data {
			if x.ID == want {
				total += x.Balance.Amount
			}
		}
	}
	return total, nil
}
