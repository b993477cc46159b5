package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/id"
)

// Delivery states. PENDING rows are the queue; the others are final until a
// redelivery makes the row PENDING again.
const (
	DeliveryPending   = "PENDING"
	DeliveryDelivered = "DELIVERED"
	DeliveryFailed    = "FAILED"  // retries exhausted
	DeliverySkipped   = "SKIPPED" // no webhook endpoint was configured
)

// Delivery is the webhook delivery state of one event.
type Delivery struct {
	EventID       string
	Tenant        Tenant
	State         string
	Attempts      int // attempts started since the window began
	WindowStart   time.Time
	NextAttemptAt time.Time
	LeaseToken    string
	LeaseUntil    *time.Time
	DeliveredAt   *time.Time
	UpdatedAt     time.Time
	// Journal, on a delivery handed over at its event's commit, names the
	// webhook_handoffs row that stands for it: it has no row of its own
	// until its first outcome is written (Finish.Handed), or until the
	// journal's lease runs out and a claim gives it one (handoff_journal.go).
	// Read back before then, it is the row it would have been: PENDING,
	// leased, its attempt counted.
	Journal string
}

const deliveryCols = `d.event_id, d.platform_id, d.env, d.state, d.attempts, d.window_start, d.next_attempt_at,
	d.lease_token, d.lease_until, d.delivered_at, d.updated_at`

func scanDelivery(row interface{ Scan(...any) error }, extra ...any) (Delivery, error) {
	var d Delivery
	var token sql.NullString
	var window, next, updated int64
	var lease, delivered sql.NullInt64
	dest := append([]any{&d.EventID, &d.Tenant.PlatformID, &d.Tenant.Env, &d.State, &d.Attempts, &window, &next,
		&token, &lease, &delivered, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return Delivery{}, classify(err)
	}
	d.LeaseToken = token.String
	d.WindowStart, d.NextAttemptAt, d.UpdatedAt = fromMicros(window), fromMicros(next), fromMicros(updated)
	d.LeaseUntil, d.DeliveredAt = timePtr(lease), timePtr(delivered)
	return d, nil
}

// InsertDelivery queues an event for delivery, due at `at`.
func (q Q) InsertDelivery(ctx context.Context, t Tenant, eventID string, at time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO webhook_deliveries (event_id, platform_id, env, state, attempts, window_start,
		next_attempt_at, updated_at) VALUES (?, ?, ?, 'PENDING', 0, ?, ?, ?)`,
		eventID, t.PlatformID, t.Env, toMicros(at), toMicros(at), toMicros(at))
	return err
}

// GetDelivery returns an event's delivery; lock takes a row lock (PostgreSQL).
func (q Q) GetDelivery(ctx context.Context, t Tenant, eventID string, lock bool) (Delivery, error) {
	query := `SELECT ` + deliveryCols + ` FROM webhook_deliveries d WHERE d.platform_id = ? AND d.env = ? AND d.event_id = ?`
	if lock {
		query += q.forUpdate()
	}
	d, err := scanDelivery(q.queryRow(ctx, query, t.PlatformID, t.Env, eventID))
	if !errors.Is(err, ErrNotFound) {
		return d, err
	}
	if d, err = q.handedDelivery(ctx, t, eventID, lock); !errors.Is(err, ErrNotFound) {
		return d, err
	}
	// One commit writes a hand-over's row and deletes its journal entry: if
	// it fell between the two reads (each its own snapshot under READ
	// COMMITTED), neither saw the delivery, and the row is there now.
	return scanDelivery(q.queryRow(ctx, query, t.PlatformID, t.Env, eventID))
}

// Claim is a delivery leased to one worker, with the event to send.
type Claim struct {
	Delivery
	Event Event
}

// ClaimRequest says what one claim may take.
type ClaimRequest struct {
	Token     string        // the lease token of every delivery taken
	Lease     time.Duration // how long the leases last
	Limit     int           // at most this many deliveries
	PerTenant int           // at most this many live leases per tenant, counting those held already
	// Finished names deliveries whose attempts are over but whose outcomes
	// are not written yet. Their leases still hold, so no one else takes
	// them, but they occupy no worker, and the cap is about workers.
	Finished []string
	// Busy says the caller's last claim found work, so the read that spares
	// idle nodes a write transaction would only cost a round trip.
	Busy bool
	// PastCapped lets the claim look behind the oldest due deliveries when
	// tenants at their cap hold them all. That scan costs as much as the
	// backlog it passes, so a caller whose last look found nothing
	// (ClaimResult.Blocked) should wait a while before asking again.
	PastCapped bool
	// Handed counts, per tenant, the caller's hand-overs waiting or in
	// flight that have no rows (Claim.Journal): the database cannot count
	// them, so they are added to its leases.
	Handed map[Tenant]int
}

// ClaimResult is what one claim took.
type ClaimResult struct {
	Claims []Claim
	// Blocked: the claim took fewer than Limit because tenants at their cap
	// hold the oldest due deliveries, and it found nothing it could take
	// behind them (or was not asked to look).
	Blocked bool
	// Waiting: it saw due deliveries it did not take (the limit, or
	// tenants at their cap), so a claim made once workers free up will
	// find work.
	Waiting bool
}

// claimOverfetch is how many due rows a claim reads per delivery it may
// take, so that a capped tenant's rows at the head of the queue leave room
// for the others behind them.
const claimOverfetch = 4

// ClaimDeliveries claims as ClaimBatch does, looking past capped tenants.
func (db *DB) ClaimDeliveries(ctx context.Context, token string, lease time.Duration, limit, perTenant int) ([]Claim, error) {
	res, err := db.ClaimBatch(ctx, ClaimRequest{Token: token, Lease: lease, Limit: limit, PerTenant: perTenant, PastCapped: true})
	return res.Claims, err
}

// ClaimBatch leases up to req.Limit due deliveries to req.Token until
// now+req.Lease and counts their attempts, in one transaction. Rows come
// oldest due first, which keeps each tenant roughly in order. A tenant never
// gets more than req.PerTenant leases at a time (as seen by this
// transaction), so one slow receiver cannot take every worker.
//
// The cost grows with the rows claimed, not with the backlog: the live
// leases are read once (only the leased rows) and counted per tenant,
// only a head of the queue a few times req.Limit long is read, and tenants
// at their cap are passed over in Go. Only when they fill that whole head,
// and req.PastCapped, does a second read skip them in SQL, which walks
// their backlog.
//
// Two workers never hold the same row: on PostgreSQL the candidates are
// locked FOR UPDATE SKIP LOCKED (a concurrent claimer skips them instead of
// waiting), and the UPDATE re-checks that the row is unleased; SQLite has one
// writer, so the check alone is enough.
func (db *DB) ClaimBatch(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	if !req.Busy {
		// Idle nodes poll often; a read first keeps them from taking the
		// write lock (SQLite) or row locks (PostgreSQL) when nothing is due.
		now := toMicros(db.now())
		var one int
		err := db.Read().queryRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE state = 'PENDING' AND next_attempt_at <= ?
			AND (lease_until IS NULL OR lease_until < ?) LIMIT 1`, now, now).Scan(&one)
		if errors.Is(classify(err), ErrNotFound) {
			err = db.Read().queryRow(ctx, `SELECT 1 FROM webhook_handoffs WHERE lease_until < ? LIMIT 1`, now).Scan(&one)
		}
		if errors.Is(classify(err), ErrNotFound) {
			return ClaimResult{}, nil
		}
		if err != nil {
			return ClaimResult{}, classify(err)
		}
	}
	var res ClaimResult
	err := db.InTx(ctx, func(tx *Tx) error {
		now := tx.Now()
		if err := tx.sweepHandoffs(ctx, now); err != nil {
			return err
		}
		picked, seen, blocked, err := tx.pickDue(ctx, now, req)
		if err != nil {
			return err
		}
		claims, err := tx.lease(ctx, picked, req.Token, now, now.Add(req.Lease))
		res = ClaimResult{Claims: claims, Blocked: blocked, Waiting: seen > len(picked)}
		return err
	})
	return res, err
}

// pickDue chooses up to req.Limit due deliveries, oldest first, at most
// req.PerTenant per tenant counting the leases they hold; seen is how many
// due ones it read. blocked: see ClaimResult.
func (tx *Tx) pickDue(ctx context.Context, at time.Time, req ClaimRequest) (picked []Claim, seen int, blocked bool, err error) {
	held, err := tx.leasesByTenant(ctx, at, req.Finished)
	if err != nil {
		return nil, 0, false, err
	}
	for t, n := range req.Handed {
		held[t] += n
	}
	pick := func(cs []Claim) {
		for _, c := range cs {
			if len(picked) < req.Limit && held[c.Tenant] < req.PerTenant {
				held[c.Tenant]++
				picked = append(picked, c)
			}
		}
	}
	head := min(claimOverfetch*req.Limit, 400)
	cs, err := tx.dueDeliveries(ctx, at, nil, nil, head)
	if err != nil {
		return nil, 0, false, err
	}
	pick(cs)
	if len(cs) < head || len(picked) == req.Limit {
		return picked, len(cs), false, nil
	}
	if !req.PastCapped {
		return picked, len(cs), true, nil
	}
	var capped []Tenant
	for t, n := range held {
		if n >= req.PerTenant {
			capped = append(capped, t)
		}
	}
	// A stable statement text, so PostgreSQL reuses its prepared plan.
	slices.SortFunc(capped, func(a, b Tenant) int {
		return cmp.Or(cmp.Compare(a.PlatformID, b.PlatformID), cmp.Compare(a.Env, b.Env))
	})
	more, err := tx.dueDeliveries(ctx, at, &cs[len(cs)-1], capped, min(claimOverfetch*(req.Limit-len(picked)), 400))
	if err != nil {
		return nil, 0, false, err
	}
	before := len(picked)
	pick(more)
	return picked, len(cs) + len(more), len(picked) == before, nil
}

// leasesByTenant counts each tenant's live leases, but for those of the
// events in finished (see ClaimRequest.Finished). It reads only the leased
// rows (index webhook_deliveries_leased): those in flight, those waiting for
// their outcome to be written, and those a dead node left until they
// expire. They are counted here rather than in SQL so that the statement
// text does not change with finished, which would cost PostgreSQL a fresh
// plan for each length.
func (tx *Tx) leasesByTenant(ctx context.Context, at time.Time, finished []string) (map[Tenant]int, error) {
	rows, err := tx.query(ctx, `SELECT event_id, platform_id, env FROM webhook_deliveries WHERE lease_until >= ?`, toMicros(at))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	skip := make(map[string]bool, len(finished))
	for _, id := range finished {
		skip[id] = true
	}
	held := map[Tenant]int{}
	for rows.Next() {
		var id string
		var t Tenant
		if err := rows.Scan(&id, &t.PlatformID, &t.Env); err != nil {
			return nil, classify(err)
		}
		if !skip[id] {
			held[t]++
		}
	}
	return held, classify(rows.Err())
}

// dueDeliveries reads (and on PostgreSQL locks) up to limit due, unleased
// deliveries with their events, oldest due first: after `after` if set, and
// not of the tenants in skip.
func (tx *Tx) dueDeliveries(ctx context.Context, at time.Time, after *Claim, skip []Tenant, limit int) ([]Claim, error) {
	now := toMicros(at)
	query := `SELECT ` + deliveryCols + `, e.type, e.resource_id, e.envelope, e.created_at
		FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)`
	args := []any{now, now}
	if after != nil {
		query += ` AND (d.next_attempt_at, d.event_id) > (?, ?)`
		args = append(args, toMicros(after.NextAttemptAt), after.EventID)
	}
	for _, t := range skip {
		query += ` AND NOT (d.platform_id = ? AND d.env = ?)`
		args = append(args, t.PlatformID, t.Env)
	}
	query += ` ORDER BY d.next_attempt_at, d.event_id LIMIT ?`
	args = append(args, limit)
	if tx.engine == Postgres {
		query += ` FOR UPDATE OF d SKIP LOCKED`
	}
	rows, err := tx.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Claim
	for rows.Next() {
		var c Claim
		var env string
		var created int64
		if c.Delivery, err = scanDelivery(rows, &c.Event.Type, &c.Event.ResourceID, &env, &created); err != nil {
			return nil, err
		}
		c.Event.ID, c.Event.Tenant, c.Event.Envelope, c.Event.CreatedAt = c.EventID, c.Tenant, []byte(env), fromMicros(created)
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// lease gives the picked deliveries to token in one statement and returns
// those it got. The WHERE re-checks that each is still unleased.
func (tx *Tx) lease(ctx context.Context, picked []Claim, token string, now, until time.Time) ([]Claim, error) {
	if len(picked) == 0 {
		return nil, nil
	}
	args := []any{token, toMicros(until), toMicros(now)}
	for _, c := range picked {
		args = append(args, c.EventID)
	}
	args = append(args, toMicros(now))
	rows, err := tx.query(ctx, `UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?, attempts = attempts + 1,
		updated_at = ? WHERE event_id IN (`+ledgerPlaceholders(len(picked))+`) AND state = 'PENDING'
		AND (lease_until IS NULL OR lease_until < ?) RETURNING event_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	leased := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, classify(err)
		}
		leased[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	var out []Claim
	for _, c := range picked {
		if leased[c.EventID] { // not: taken meanwhile, only possible without row locks
			c.LeaseToken, c.LeaseUntil, c.Attempts = token, &until, c.Attempts+1
			out = append(out, c)
		}
	}
	return out, nil
}

// LeaseDelivery leases one pending delivery to token (for a delivery made
// synchronously by a request, such as the sandbox test webhook).
func (q Q) LeaseDelivery(ctx context.Context, t Tenant, eventID, token string, until time.Time) error {
	now := toMicros(q.Now())
	res, err := q.exec(ctx, `UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?, attempts = attempts + 1,
		updated_at = ? WHERE platform_id = ? AND env = ? AND event_id = ? AND state = 'PENDING'
		AND (lease_until IS NULL OR lease_until < ?)`,
		token, toMicros(until), now, t.PlatformID, t.Env, eventID, now)
	return affectedOne(res, err)
}

// DeliveryOutcome is what a worker writes when it finishes an attempt.
type DeliveryOutcome struct {
	State         string // PENDING (retry at NextAttemptAt), DELIVERED, FAILED or SKIPPED
	NextAttemptAt time.Time
	DeliveredAt   *time.Time
}

// FinishDelivery records an attempt's outcome and releases the lease, but
// only while token still holds it. ErrNotFound means the lease was lost (it
// expired and another worker took the row): the caller's outcome is stale.
func (q Q) FinishDelivery(ctx context.Context, eventID, token string, o DeliveryOutcome) error {
	held, err := q.FinishDeliveries(ctx, []Finish{{EventID: eventID, Token: token, Outcome: o}})
	if err == nil && !held[0] {
		err = ErrNotFound
	}
	return err
}

// Finish is the outcome of one attempt at a leased delivery.
type Finish struct {
	EventID string
	Token   string // the lease the attempt was made under
	Outcome DeliveryOutcome
	// Attempt, when set, is recorded: as the delivery's last attempt while
	// Token holds the lease (the one it held before moves to
	// webhook_attempts), in webhook_attempts when the lease was lost.
	Attempt *Attempt
	// Handed, for a delivery handed over without a row (Claim.Journal), is
	// the delivery as its claim holds it: the finish writes its row, unless
	// a claim gave it one after the journal's lease ran out (a lost lease).
	Handed *Delivery
}

// finishChunk caps the rows of one UPDATE (13 parameters each), well within
// both engines' parameter limits.
const finishChunk = 500

// FinishDeliveries applies each outcome as FinishDelivery does, in as few
// statements as it can, records each Finish's attempt, and reports for each
// whether its token still held the lease (false: stale, nothing changed but
// the attempt recorded).
func (q Q) FinishDeliveries(ctx context.Context, fs []Finish) ([]bool, error) {
	held := make([]bool, len(fs))
	return held, q.finishAll(ctx, fs, held, false)
}

// FinishDeliveriesAtCommit is FinishDeliveries for a caller that needs the
// answers only once its transaction has committed: in a batch fn on
// PostgreSQL (InBatchTx), the statements are queued like the batch's other
// writes and go out in the commit's round trip, and held is filled as the
// batch commits (read it after InBatchTx has returned nil); elsewhere they
// run at once and held is filled before it returns. held[i] answers fs[i].
func (q Q) FinishDeliveriesAtCommit(ctx context.Context, fs []Finish, held []bool) error {
	if len(held) != len(fs) {
		return fmt.Errorf("store: %d answers for %d finishes", len(held), len(fs))
	}
	return q.finishAll(ctx, fs, held, q.engine == Postgres && q.outbox != nil && q.outbox.shared)
}

// finishAll applies fs in chunks, filling held; queued: the PostgreSQL
// statements wait for the commit (FinishDeliveriesAtCommit).
func (q Q) finishAll(ctx context.Context, fs []Finish, held []bool, queued bool) error {
	clear(held)
	for start := 0; start < len(fs); {
		// A statement that met one event twice (a stale and a current
		// lease) could not tell which of them it applied: repeats go to the
		// next statement.
		end, seen := start, map[string]bool{}
		for end < len(fs) && end-start < finishChunk && !seen[fs[end].EventID] {
			seen[fs[end].EventID] = true
			end++
		}
		if err := q.finishDeliveries(ctx, fs[start:end], held[start:end], queued); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// lastAttemptCols are the columns of webhook_deliveries that hold its last
// attempt (migration 0059), in the order of attemptCols.
var lastAttemptCols = []string{"last_attempt_id", "last_attempted_at", "last_attempt_url", "last_attempt_status_code",
	"last_attempt_latency_ms", "last_attempt_response_excerpt", "last_attempt_error", "last_attempt_peer_public"}

// attemptCols are the columns of webhook_attempts but event_id, platform_id
// and env.
var attemptCols = []string{"id", "attempted_at", "url", "status_code", "latency_ms", "response_excerpt", "error", "peer_public"}

// finishValues are the rows of fs as a WITH query v (SQLite; PostgreSQL
// takes them as finishArrays): the outcome (event_id, token, state, next_at,
// delivered_at) and the attempt (a_id … a_peer_public, NULL when there is
// none).
func finishValues(fs []Finish, now time.Time) (string, []any) {
	// The casts keep the numbers numbers, as they were when PostgreSQL,
	// which types VALUES columns from their first row, took this form too.
	const row = `(?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ?, CAST(? AS BIGINT), ?, CAST(? AS INTEGER),
		CAST(? AS BIGINT), ?, ?, CAST(? AS INTEGER))`
	values := make([]string, len(fs))
	args := make([]any, 0, 13*len(fs))
	for i, f := range fs {
		next := f.Outcome.NextAttemptAt
		if next.IsZero() {
			next = now
		}
		values[i] = row
		args = append(args, f.EventID, f.Token, f.Outcome.State, toMicros(next), nullMicros(f.Outcome.DeliveredAt))
		if a := f.Attempt; a != nil {
			args = append(args, attemptArgs(*a)...)
		} else {
			args = append(args, nil, nil, nil, nil, nil, nil, nil, nil)
		}
	}
	return `v (` + finishColumns + `) AS (VALUES ` + strings.Join(values, ", ") + `)`, args
}

// finishColumns name the columns of v, the rows of a finish.
const finishColumns = `event_id, token, state, next_at, delivered_at, a_id, a_attempted_at, a_url, a_status_code,
	a_latency_ms, a_response_excerpt, a_error, a_peer_public`

// finishArrays are the rows of fs as finishValues makes them, for
// PostgreSQL: one array per column, unnested, so the statement's text does
// not depend on how many rows it has. PostgreSQL plans it once per
// connection and keeps the plan; a VALUES list made a new text for every
// batch size, planned again at every execution (1.1 ms for about 32 rows,
// a third of the statement's time).
func finishArrays(fs []Finish, now time.Time) []any {
	n := len(fs)
	events, tokens, states := make(textColumn, n), make(textColumn, n), make(textColumn, n)
	nexts, delivered := make(int8Column, n), make(int8Column, n)
	ids, urls, excerpts, errs := make(textColumn, n), make(textColumn, n), make(textColumn, n), make(textColumn, n)
	attempted, latencies := make(int8Column, n), make(int8Column, n)
	statuses, peers := make(int8Column, n), make(int8Column, n)
	platforms, envs := make(textColumn, n), make(textColumn, n)
	for i := range fs {
		f := fs[i] // the columns point into this copy
		events[i], tokens[i], states[i] = &f.EventID, &f.Token, &f.Outcome.State
		next := f.Outcome.NextAttemptAt
		if next.IsZero() {
			next = now
		}
		nexts[i] = new(toMicros(next))
		if d := f.Outcome.DeliveredAt; d != nil {
			delivered[i] = new(toMicros(*d))
		}
		if a := f.Attempt; a != nil {
			ids[i], urls[i], excerpts[i], errs[i] = &a.ID, &a.URL, &a.ResponseExcerpt, &a.Error
			platforms[i], envs[i] = &a.Tenant.PlatformID, &a.Tenant.Env
			attempted[i], latencies[i] = new(toMicros(a.AttemptedAt)), new(a.LatencyMS)
			if a.StatusCode != 0 {
				statuses[i] = new(int64(a.StatusCode))
			}
			peers[i] = new(int64(0))
			if a.PeerPublic {
				peers[i] = new(int64(1))
			}
		}
	}
	return []any{events, tokens, states, nexts, delivered, ids, attempted, urls, statuses, latencies, excerpts, errs, peers,
		platforms, envs}
}

// attemptArgs are a's values in the order of attemptCols.
func attemptArgs(a Attempt) []any {
	status := sql.NullInt64{Int64: int64(a.StatusCode), Valid: a.StatusCode != 0}
	peer := 0
	if a.PeerPublic {
		peer = 1
	}
	return []any{a.ID, toMicros(a.AttemptedAt), a.URL, status, a.LatencyMS, a.ResponseExcerpt, a.Error, peer}
}

// finishSet is the SET list of a finish: the outcome, the lease released,
// and the attempt of v as the last one, if v has one.
func finishSet() string {
	set := []string{"state = v.state", "next_attempt_at = v.next_at", "delivered_at = COALESCE(v.delivered_at, d.delivered_at)",
		"lease_token = NULL", "lease_until = NULL", "updated_at = ?"}
	for i, c := range lastAttemptCols {
		set = append(set, fmt.Sprintf("%s = CASE WHEN v.a_id IS NULL THEN d.%s ELSE v.a_%s END", c, c, attemptCols[i]))
	}
	return strings.Join(set, ", ")
}

// movedAttempt selects, from a delivery row o (and its finish v), the last
// attempt it held, as a row of webhook_attempts.
func movedAttempt(o string) string {
	cols := make([]string, len(lastAttemptCols))
	for i, c := range lastAttemptCols {
		cols[i] = o + "." + c
	}
	cols[len(cols)-1] = "COALESCE(" + cols[len(cols)-1] + ", 0)"
	return `INSERT INTO webhook_attempts (event_id, platform_id, env, ` + strings.Join(attemptCols, ", ") + `)
		SELECT ` + o + `.event_id, ` + o + `.platform_id, ` + o + `.env, ` + strings.Join(cols, ", ")
}

// finishQueryPG is finishDeliveries' statement on PostgreSQL: its rows are
// finishArrays', its last parameter the time of the update. An attempt whose
// lease was lost (its row not updated) goes to webhook_attempts (lost).
var finishQueryPG = `WITH v AS NOT MATERIALIZED (SELECT * FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]),
		CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]),
		CAST(? AS INTEGER[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS INTEGER[]),
		CAST(? AS TEXT[]), CAST(? AS TEXT[]))
		AS u (` + finishColumns + `, a_platform_id, a_env)),
	upd AS (UPDATE webhook_deliveries AS d SET ` + finishSet() + `
		FROM v JOIN webhook_deliveries o ON o.event_id = v.event_id AND o.lease_token = v.token
		WHERE d.event_id = v.event_id AND d.lease_token = v.token
			AND d.last_attempt_id IS NOT DISTINCT FROM o.last_attempt_id
		RETURNING d.event_id, d.platform_id, d.env, v.a_id AS a_id, o.` + strings.Join(lastAttemptCols, ", o.") + `),
	moved AS (` + movedAttempt("upd") + ` FROM upd WHERE upd.a_id IS NOT NULL AND upd.last_attempt_id IS NOT NULL),
	lost AS (INSERT INTO webhook_attempts (event_id, platform_id, env, ` + strings.Join(attemptCols, ", ") + `)
		SELECT v.event_id, v.a_platform_id, v.a_env, v.a_` + strings.Join(attemptCols, ", v.a_") + ` FROM v
		WHERE v.a_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM upd WHERE upd.event_id = v.event_id))
	SELECT event_id FROM upd`

// finishDeliveries updates the rows of fs (distinct events) whose tokens
// hold their leases and sets their held (queued: as the batch commits). A
// row given an attempt gets it as its last attempt, and the last attempt it
// held, if any, becomes a row of webhook_attempts, so that no attempt is
// lost or kept twice; an attempt whose lease was lost becomes a row of
// webhook_attempts too.
//
// On PostgreSQL that is one statement: o, the same row joined again, reads
// each row's last attempt, the UPDATE replaces it and returns what o read,
// and the INSERT takes the returned rows, so only rows that were updated
// move their attempt. o reads the statement's snapshot; the UPDATE locks
// each row and, if a concurrent transaction changed it meanwhile, re-checks
// its WHERE against the new version (o stays the version first read), which
// must still hold the token and the last attempt o read (else the row is
// left alone and counts as a lost lease). That costs no extra row lock
// (SELECT … FOR UPDATE would write one per row). o joins v directly: as a
// subquery joining v of its own, the planner, expecting ten rows of each,
// matched them in a nested loop, quadratic in the rows (0.55 of 1.05 ms
// for 40). On SQLite, whose one writer keeps the rows still between
// statements, the move and the UPDATE are two statements.
func (q Q) finishDeliveries(ctx context.Context, fs []Finish, held []bool, queued bool) error {
	var rows, handed []int
	for i, f := range fs {
		if f.Handed != nil {
			handed = append(handed, i)
		} else {
			rows = append(rows, i)
		}
	}
	if len(rows) > 0 {
		if err := q.finishRows(ctx, fs, held, rows, queued); err != nil {
			return err
		}
	}
	if len(handed) > 0 {
		return q.finishHanded(ctx, fs, held, handed, queued)
	}
	return nil
}

// heldBy picks fs[idx] and makes the scan that sets held for each event id
// a statement about them returns, and the reset that clears their held.
func heldBy(fs []Finish, held []bool, idx []int) (sub []Finish, scan func(rowScanner) error, reset func()) {
	at := make(map[string]int, len(idx))
	sub = make([]Finish, len(idx))
	for j, i := range idx {
		sub[j], at[fs[i].EventID] = fs[i], i
	}
	scan = func(r rowScanner) error {
		var id string
		if err := r.Scan(&id); err != nil {
			return err
		}
		if i, ok := at[id]; ok {
			held[i] = true
		}
		return nil
	}
	reset = func() {
		for _, i := range idx {
			held[i] = false
		}
	}
	return sub, scan, reset
}

// finishRows is finishDeliveries for fs[idx], deliveries with rows.
func (q Q) finishRows(ctx context.Context, all []Finish, held []bool, idx []int, queued bool) error {
	now := q.Now()
	fs, scan, reset := heldBy(all, held, idx)
	if q.engine == Postgres {
		args := append(finishArrays(fs, now), toMicros(now))
		if queued {
			return q.queueWrite(statement{sql: finishQueryPG, args: args, scan: scan, reset: reset, touch: finishTables})
		}
		return q.queryEach(ctx, finishQueryPG, args, scan)
	}
	v, args := finishValues(fs, now)
	if _, err := q.exec(ctx, `WITH `+v+` `+movedAttempt("d")+` FROM webhook_deliveries d JOIN v
		ON d.event_id = v.event_id AND d.lease_token = v.token
		WHERE v.a_id IS NOT NULL AND d.last_attempt_id IS NOT NULL`, args...); err != nil {
		return err
	}
	err := q.queryEach(ctx, `WITH `+v+` UPDATE webhook_deliveries AS d SET `+finishSet()+`
		FROM v WHERE d.event_id = v.event_id AND d.lease_token = v.token RETURNING event_id`,
		append(args, toMicros(now)), scan)
	if err != nil {
		return err
	}
	return q.insertLost(ctx, all, held, idx)
}

// insertLost keeps the attempts of fs[idx] whose leases were lost (SQLite):
// the delivery's last attempt is its current holder's to write.
func (q Q) insertLost(ctx context.Context, fs []Finish, held []bool, idx []int) error {
	var lost []Attempt
	for _, i := range idx {
		if !held[i] && fs[i].Attempt != nil {
			lost = append(lost, *fs[i].Attempt)
		}
	}
	return q.InsertAttempts(ctx, lost)
}

// finishTables are the tables a queued finish touches (outbox.go).
var finishTables = []string{"webhook_deliveries", "webhook_attempts"}

// ReleaseLeases gives back the leases of claims whose attempts never
// started (a stopping runner's hand-overs): each row, while its claim's
// token still holds it, becomes unleased with the attempt uncounted, so a
// claim can take it at once.
func (q Q) ReleaseLeases(ctx context.Context, cs []Claim) error {
	var handed []Claim
	cs = slices.DeleteFunc(slices.Clone(cs), func(c Claim) bool {
		if c.Journal != "" {
			handed = append(handed, c)
		}
		return c.Journal != ""
	})
	if err := q.releaseHanded(ctx, handed); err != nil {
		return err
	}
	for len(cs) > 0 {
		n := min(len(cs), outboxChunk)
		args := []any{toMicros(q.Now())}
		values := make([]string, n)
		for i, c := range cs[:n] {
			values[i] = "(?, ?)"
			args = append(args, c.EventID, c.LeaseToken)
		}
		if _, err := q.exec(ctx, `UPDATE webhook_deliveries AS d SET lease_token = NULL, lease_until = NULL,
			attempts = d.attempts - 1, updated_at = ? FROM (VALUES `+strings.Join(values, ", ")+`) AS v
			WHERE d.event_id = v.column1 AND d.lease_token = v.column2 AND d.state = 'PENDING'`, args...); err != nil {
			return err
		}
		cs = cs[n:]
	}
	return nil
}

// ReleaseLeasesOf gives back every live lease whose token begins with
// prefix, and reports how many: a node that restarts after a crash releases
// those of its predecessor, which would otherwise wait out their leases and
// count against their tenants' caps meanwhile. The attempts stay counted
// (one may have started). Only a node that knows no live node shares its
// prefix may call it.
func (q Q) ReleaseLeasesOf(ctx context.Context, prefix string) (int64, error) {
	if prefix == "" {
		return 0, errors.New("store: ReleaseLeasesOf needs a prefix")
	}
	res, err := q.exec(ctx, `UPDATE webhook_deliveries SET lease_token = NULL, lease_until = NULL, updated_at = ?
		WHERE lease_until IS NOT NULL AND state = 'PENDING' AND substr(lease_token, 1, ?) = ?`,
		toMicros(q.Now()), utf8.RuneCountInString(prefix), prefix)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, classify(err)
	}
	journals, err := q.expireHandoffsOf(ctx, prefix, utf8.RuneCountInString(prefix))
	return n + journals, err
}

// RestartDelivery makes an event's delivery PENDING and due now, with a new
// retry window, unless an attempt is in flight (ErrConflict). An event
// without a delivery row gets one.
func (q Q) RestartDelivery(ctx context.Context, t Tenant, eventID string) error {
	now := q.Now()
	cur, err := q.GetDelivery(ctx, t, eventID, true)
	if errors.Is(err, ErrNotFound) {
		return q.InsertDelivery(ctx, t, eventID, now)
	}
	if err != nil {
		return err
	}
	if cur.LeaseUntil != nil && !cur.LeaseUntil.Before(now) {
		return ErrConflict
	}
	if cur.Journal != "" { // its journal's lease ran out: a claim would give it this row
		return q.InsertDelivery(ctx, t, eventID, now)
	}
	res, err := q.exec(ctx, `UPDATE webhook_deliveries SET state = 'PENDING', attempts = 0, window_start = ?,
		next_attempt_at = ?, lease_token = NULL, lease_until = NULL, updated_at = ?
		WHERE platform_id = ? AND env = ? AND event_id = ? AND (lease_until IS NULL OR lease_until < ?)`,
		toMicros(now), toMicros(now), toMicros(now), t.PlatformID, t.Env, eventID, toMicros(now))
	if err := affectedOne(res, err); errors.Is(err, ErrNotFound) {
		return ErrConflict
	} else if err != nil {
		return err
	}
	return nil
}

// Attempt is one recorded delivery attempt.
type Attempt struct {
	ID              string
	EventID         string
	Tenant          Tenant
	AttemptedAt     time.Time
	URL             string
	StatusCode      int // 0: no HTTP response
	LatencyMS       int64
	ResponseExcerpt string
	Error           string
	// PeerPublic: the address the attempt reached was a public one (false
	// when unknown, as for attempts recorded before migration 0040).
	PeerPublic bool
}

// attemptChunk caps the rows of one INSERT (11 parameters each).
const attemptChunk = 500

// InsertAttempts records attempts in webhook_attempts, many rows per
// statement: those whose lease was lost (FinishDeliveries), and tests
// that make rows of the layout before migration 0059.
func (q Q) InsertAttempts(ctx context.Context, as []Attempt) error {
	for len(as) > 0 {
		n := min(len(as), attemptChunk)
		rows := make([]string, n)
		args := make([]any, 0, 11*n)
		for i, a := range as[:n] {
			rows[i] = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
			args = append(append(args, a.EventID, a.Tenant.PlatformID, a.Tenant.Env), attemptArgs(a)...)
		}
		if _, err := q.exec(ctx, `INSERT INTO webhook_attempts (event_id, platform_id, env, `+strings.Join(attemptCols, ", ")+`)
			VALUES `+strings.Join(rows, ", "), args...); err != nil {
			return err
		}
		as = as[n:]
	}
	return nil
}

// ListAttempts returns the latest limit attempts of an event, oldest first:
// those of webhook_attempts and the one its delivery holds inline, in the
// order of their ids.
func (q Q) ListAttempts(ctx context.Context, t Tenant, eventID string, limit int) ([]Attempt, error) {
	rows, err := q.query(ctx, `SELECT id, attempted_at, url, status_code, latency_ms, response_excerpt, error, peer_public
		FROM (SELECT * FROM (SELECT `+strings.Join(attemptCols, ", ")+` FROM webhook_attempts
				WHERE platform_id = ? AND env = ? AND event_id = ? ORDER BY id DESC LIMIT ?) AS t
			UNION ALL
			SELECT `+strings.Join(lastAttemptCols, ", ")+` FROM webhook_deliveries
				WHERE platform_id = ? AND env = ? AND event_id = ? AND last_attempt_id IS NOT NULL) AS a
		ORDER BY id DESC LIMIT ?`,
		t.PlatformID, t.Env, eventID, limit, t.PlatformID, t.Env, eventID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a := Attempt{EventID: eventID, Tenant: t}
		var at int64
		var status sql.NullInt64
		var peer int64
		if err := rows.Scan(&a.ID, &at, &a.URL, &status, &a.LatencyMS, &a.ResponseExcerpt, &a.Error, &peer); err != nil {
			return nil, classify(err)
		}
		a.AttemptedAt, a.StatusCode, a.PeerPublic = fromMicros(at), int(status.Int64), peer == 1
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	slices.Reverse(out)
	return out, nil
}

// EventFilter narrows ListEvents. Time bounds are inclusive.
type EventFilter struct {
	Type                        string
	ResourceID                  string
	CreatedAfter, CreatedBefore *time.Time
}

// EventWithDelivery is an event and, when it has one, its delivery.
type EventWithDelivery struct {
	Event    Event
	Delivery *Delivery
}

const eventCols = `e.id, e.platform_id, e.env, e.type, e.resource_id, e.envelope, e.created_at`

func scanEventWithDelivery(row interface{ Scan(...any) error }) (EventWithDelivery, error) {
	var out EventWithDelivery
	var e Event
	var env string
	var created int64
	var dID, dPlatform, dEnv, dState, dToken sql.NullString
	var dAttempts sql.NullInt64
	var dWindow, dNext, dLease, dDelivered, dUpdated sql.NullInt64
	var hID, hToken sql.NullString
	var hLease sql.NullInt64
	if err := row.Scan(&e.ID, &e.Tenant.PlatformID, &e.Tenant.Env, &e.Type, &e.ResourceID, &env, &created,
		&dID, &dPlatform, &dEnv, &dState, &dAttempts, &dWindow, &dNext, &dToken, &dLease, &dDelivered, &dUpdated,
		&hID, &hToken, &hLease); err != nil {
		return out, classify(err)
	}
	e.Envelope, e.CreatedAt = []byte(env), fromMicros(created)
	out.Event = e
	switch {
	case dID.Valid:
		out.Delivery = &Delivery{EventID: dID.String, Tenant: e.Tenant, State: dState.String, Attempts: int(dAttempts.Int64),
			WindowStart: fromMicros(dWindow.Int64), NextAttemptAt: fromMicros(dNext.Int64), LeaseToken: dToken.String,
			LeaseUntil: timePtr(dLease), DeliveredAt: timePtr(dDelivered), UpdatedAt: fromMicros(dUpdated.Int64)}
	case hID.Valid:
		d := journalDelivery(e.ID, e.Tenant, e.CreatedAt, hID.String, hToken.String, hLease.Int64)
		out.Delivery = &d
	}
	return out, nil
}

// eventJoins join an event e to its delivery d and, while it has none, to
// the journal row h that names it (handoff_journal.go).
const eventJoins = ` LEFT JOIN webhook_deliveries d ON d.event_id = e.id
	LEFT JOIN webhook_handoffs h ON d.event_id IS NULL AND h.event_ids LIKE '%' || e.id || '%'`

// eventDeliveryCols are what scanEventWithDelivery reads.
const eventDeliveryCols = eventCols + `, ` + deliveryCols + `, h.id, h.lease_token, h.lease_until`

// ListEvents returns up to limit events of the tenant after the id `after`
// (keyset), oldest first, with their deliveries, and how many match in all.
func (q Q) ListEvents(ctx context.Context, t Tenant, f EventFilter, after string, limit int) ([]EventWithDelivery, int, error) {
	w := where{}
	w.add("e.platform_id = ?", t.PlatformID)
	w.add("e.env = ?", t.Env)
	if f.Type != "" {
		w.add("e.type = ?", f.Type)
	}
	if f.ResourceID != "" {
		w.add("e.resource_id = ?", f.ResourceID)
	}
	w.timeRange("e.created_at", f.CreatedAfter, f.CreatedBefore)
	eventWindow(&w, f)
	total, err := q.countEventRows(ctx, t, f, w)
	if err != nil {
		return nil, 0, err
	}
	if after != "" {
		w.add("e.id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+eventDeliveryCols+` FROM events e`+eventJoins+w.sql()+` ORDER BY e.id LIMIT ?`,
		append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []EventWithDelivery
	for rows.Next() {
		ed, err := scanEventWithDelivery(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, ed)
	}
	return out, total, classify(rows.Err())
}

// eventWindow bounds the ids of w's events by f's time filters: an event's
// id is stamped with its created_at (id.At; events of older releases took
// theirs microseconds before it), so the rows of a window are a range of
// every events index, and its page and its totalCount read that range
// rather than the tenant's events from the oldest (docs/benchmarks.md,
// "Twenty-ninth session"). The created_at conditions stay; these only add
// bounds.
func eventWindow(w *where, f EventFilter) {
	lo, hi := id.Window(id.Event, f.CreatedAfter, f.CreatedBefore)
	if lo != "" {
		w.add("e.id >= ?", lo)
	}
	if hi != "" {
		w.add("e.id < ?", hi)
	}
}

// GetEventWithDelivery returns one event of the tenant with its delivery.
func (q Q) GetEventWithDelivery(ctx context.Context, t Tenant, eventID string) (EventWithDelivery, error) {
	return scanEventWithDelivery(q.queryRow(ctx, `SELECT `+eventDeliveryCols+` FROM events e`+eventJoins+`
		WHERE e.platform_id = ? AND e.env = ? AND e.id = ?`, t.PlatformID, t.Env, eventID))
}

// PurgeEvents deletes up to batch events created before cutoff, with their
// deliveries (which hold their last attempts) and their rows of
// webhook_attempts, and reports how many events went. Events whose
// delivery is still PENDING are kept until it ends.
//
// The old events are a range of the primary key (UUIDv7 ids sort by their
// creation time, id.Floor; migration 0063); created_at is checked too, so
// an id whose clock ran ahead of the store's never goes early.
func (db *DB) PurgeEvents(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	var n int64
	err := db.InTx(ctx, func(tx *Tx) error {
		rows, err := tx.query(ctx, `SELECT e.id FROM events e WHERE e.id < ? AND e.created_at < ? AND NOT EXISTS
			(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'PENDING')
			ORDER BY e.id LIMIT ?`, id.Floor(id.Event, cutoff), toMicros(cutoff), batch)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return classify(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return classify(err)
		}
		in := "(" + ledgerPlaceholders(len(ids)) + ")"
		for _, stmt := range []string{
			`DELETE FROM webhook_attempts WHERE event_id IN ` + in,
			`DELETE FROM webhook_deliveries WHERE event_id IN ` + in,
		} {
			if _, err := tx.exec(ctx, stmt, ids...); err != nil {
				return err
			}
		}
		n, err = tx.deleteEvents(ctx, in, ids)
		return err
	})
	return n, err
}

// deleteEvents deletes the events ids (in: their placeholders) and takes
// what it deleted off event_counts at the commit. The counts follow the
// rows this statement deleted, not the ids asked for: a purge on another
// node may have taken some first.
func (tx *Tx) deleteEvents(ctx context.Context, in string, ids []any) (int64, error) {
	rows, err := tx.query(ctx, `DELETE FROM events WHERE id IN `+in+` RETURNING platform_id, env, type`, ids...)
	if err != nil {
		return 0, err
	}
	var n int64
	err = eachRow(rows, func(r rowScanner) error {
		var t Tenant
		var typ string
		if err := r.Scan(&t.PlatformID, &t.Env, &typ); err != nil {
			return err
		}
		tx.countEvents(t, typ, -1)
		n++
		return nil
	})
	return n, classify(err)
}

// WebhookSecret is one of a tenant's Standard Webhooks secrets in its
// "whsec_…" form, sealed at rest (secrets.go). ExpiresAt is nil for the
// current secret.
type WebhookSecret struct {
	ID        string
	Tenant    Tenant
	Secret    string
	CreatedAt time.Time
	ExpiresAt *time.Time
}

// InsertWebhookSecret stores a secret. A second current secret (no expiry)
// for the tenant is ErrConflict.
func (q Q) InsertWebhookSecret(ctx context.Context, s WebhookSecret) error {
	defer q.changed(settingKey{kind: settingSecrets, tenant: s.Tenant})
	sealed, err := q.seal("webhook_secrets", s.ID, s.Secret)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO webhook_secrets (id, platform_id, env, secret, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, s.ID, s.Tenant.PlatformID, s.Tenant.Env, sealed, toMicros(s.CreatedAt),
		nullMicros(s.ExpiresAt))
	return err
}

// ActiveWebhookSecrets returns the tenant's secrets that sign at `at`: the
// current one and those whose overlap has not ended, newest first.
func (q Q) ActiveWebhookSecrets(ctx context.Context, t Tenant, at time.Time) ([]WebhookSecret, error) {
	rows, err := q.query(ctx, `SELECT id, secret, created_at, expires_at FROM webhook_secrets
		WHERE platform_id = ? AND env = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id DESC`,
		t.PlatformID, t.Env, toMicros(at))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WebhookSecret
	for rows.Next() {
		s := WebhookSecret{Tenant: t}
		var created int64
		var expires sql.NullInt64
		if err := rows.Scan(&s.ID, &s.Secret, &created, &expires); err != nil {
			return nil, classify(err)
		}
		if s.Secret, err = q.open("webhook_secrets", s.ID, s.Secret); err != nil {
			return nil, err
		}
		s.CreatedAt, s.ExpiresAt = fromMicros(created), timePtr(expires)
		out = append(out, s)
	}
	return out, classify(rows.Err())
}

// ExpireCurrentWebhookSecret gives the tenant's current secret an expiry, so
// a new current secret can be inserted. ErrNotFound: there was none.
func (q Q) ExpireCurrentWebhookSecret(ctx context.Context, t Tenant, at time.Time) error {
	defer q.changed(settingKey{kind: settingSecrets, tenant: t})
	res, err := q.exec(ctx, `UPDATE webhook_secrets SET expires_at = ? WHERE platform_id = ? AND env = ? AND expires_at IS NULL`,
		toMicros(at), t.PlatformID, t.Env)
	return affectedOne(res, err)
}

// PurgeWebhookSecrets deletes secrets that expired before cutoff.
func (q Q) PurgeWebhookSecrets(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.exec(ctx, `DELETE FROM webhook_secrets WHERE expires_at IS NOT NULL AND expires_at < ?`, toMicros(cutoff))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// WebhookSigningKey returns the named private key PEM, storing the one that
// generate makes if there is none yet, sealed (secrets.go). When several
// nodes start at once, the first insert wins and every node reads that one.
func (db *DB) WebhookSigningKey(ctx context.Context, name string, generate func() ([]byte, error)) ([]byte, error) {
	pem, err := db.webhookSigningKey(ctx, name)
	if !errors.Is(err, ErrNotFound) {
		return pem, err
	}
	fresh, err := generate()
	if err != nil {
		return nil, err
	}
	w := db.Write()
	sealed, err := w.seal("webhook_signing_keys", name, string(fresh))
	if err != nil {
		return nil, err
	}
	if _, err := w.exec(ctx, `INSERT INTO webhook_signing_keys (name, private_pem, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, sealed, toMicros(db.now())); err != nil {
		return nil, err
	}
	return db.webhookSigningKey(ctx, name)
}

func (db *DB) webhookSigningKey(ctx context.Context, name string) ([]byte, error) {
	q := db.Read()
	var pem string
	if err := q.queryRow(ctx, `SELECT private_pem FROM webhook_signing_keys WHERE name = ?`, name).Scan(&pem); err != nil {
		return nil, classify(err)
	}
	pem, err := q.open("webhook_signing_keys", name, pem)
	return []byte(pem), err
}
