package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
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
	return scanDelivery(q.queryRow(ctx, query, t.PlatformID, t.Env, eventID))
}

// Claim is a delivery leased to one worker, with the event to send.
type Claim struct {
	Delivery
	Event Event
}

// ClaimDeliveries leases up to limit due deliveries to token until now+lease
// and counts the attempt. A tenant never gets more than perTenant leases at a
// time (as seen by this transaction), so one slow receiver cannot take every
// worker: tenants at their cap are filtered out in SQL, and a backlog of one
// tenant within the candidates is capped here (candidates are over-fetched so
// that others behind it still get their turn). Rows come oldest due first,
// which keeps each tenant roughly in order.
//
// Two workers never hold the same row: on PostgreSQL the candidates are
// locked FOR UPDATE SKIP LOCKED (a concurrent claimer skips them instead of
// waiting), and the UPDATE re-checks that the row is unleased; SQLite has one
// writer, so the check alone is enough.
func (db *DB) ClaimDeliveries(ctx context.Context, token string, lease time.Duration, limit, perTenant int) ([]Claim, error) {
	// Idle nodes poll often; a read first keeps them from taking the write
	// lock (SQLite) or row locks (PostgreSQL) when nothing is due.
	now := toMicros(db.now())
	var one int
	err := db.Read().queryRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE state = 'PENDING' AND next_attempt_at <= ?
		AND (lease_until IS NULL OR lease_until < ?) LIMIT 1`, now, now).Scan(&one)
	if errors.Is(classify(err), ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	var out []Claim
	err = db.InTx(ctx, func(tx *Tx) error {
		out = nil
		now := tx.Now()
		picked, err := tx.claimCandidates(ctx, now, limit, perTenant)
		if err != nil {
			return err
		}
		until := now.Add(lease)
		for _, c := range picked {
			res, err := tx.exec(ctx, `UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?, attempts = attempts + 1,
				updated_at = ? WHERE event_id = ? AND state = 'PENDING' AND (lease_until IS NULL OR lease_until < ?)`,
				token, toMicros(until), toMicros(now), c.EventID, toMicros(now))
			if err := affectedOne(res, err); errors.Is(err, ErrNotFound) {
				continue // taken meanwhile; only possible without row locks
			} else if err != nil {
				return err
			}
			c.LeaseToken, c.LeaseUntil, c.Attempts = token, &until, c.Attempts+1
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// claimCandidates reads (and on PostgreSQL locks) the due deliveries a claim
// may take, at most limit and at most perTenant per tenant including those
// already in flight.
func (tx *Tx) claimCandidates(ctx context.Context, at time.Time, limit, perTenant int) ([]Claim, error) {
	now := toMicros(at)
	inFlight := `(SELECT COUNT(*) FROM webhook_deliveries b WHERE b.platform_id = d.platform_id AND b.env = d.env
		AND b.lease_until >= ?)`
	query := `SELECT ` + deliveryCols + `, e.type, e.resource_id, e.envelope, e.created_at, ` + inFlight + `
		FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)
		AND ` + inFlight + ` < ? ORDER BY d.next_attempt_at, d.event_id LIMIT ?`
	if tx.engine == Postgres {
		query += ` FOR UPDATE OF d SKIP LOCKED`
	}
	rows, err := tx.query(ctx, query, now, now, now, now, perTenant, min(4*limit, 400))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	busy := map[Tenant]int{}
	var picked []Claim
	for rows.Next() {
		var c Claim
		var env string
		var created int64
		var n int
		if c.Delivery, err = scanDelivery(rows, &c.Event.Type, &c.Event.ResourceID, &env, &created, &n); err != nil {
			return nil, err
		}
		c.Event.ID, c.Event.Tenant, c.Event.Envelope, c.Event.CreatedAt = c.EventID, c.Tenant, []byte(env), fromMicros(created)
		if _, seen := busy[c.Tenant]; !seen {
			busy[c.Tenant] = n
		}
		if busy[c.Tenant] >= perTenant || len(picked) == limit {
			continue
		}
		busy[c.Tenant]++
		picked = append(picked, c)
	}
	return picked, classify(rows.Err())
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
	next := o.NextAttemptAt
	if next.IsZero() {
		next = q.Now()
	}
	res, err := q.exec(ctx, `UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, delivered_at = COALESCE(?, delivered_at),
		lease_token = NULL, lease_until = NULL, updated_at = ? WHERE event_id = ? AND lease_token = ?`,
		o.State, toMicros(next), nullMicros(o.DeliveredAt), toMicros(q.Now()), eventID, token)
	return affectedOne(res, err)
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
}

// InsertAttempt records an attempt.
func (q Q) InsertAttempt(ctx context.Context, a Attempt) error {
	status := sql.NullInt64{Int64: int64(a.StatusCode), Valid: a.StatusCode != 0}
	_, err := q.exec(ctx, `INSERT INTO webhook_attempts (id, event_id, platform_id, env, attempted_at, url, status_code,
		latency_ms, response_excerpt, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.EventID, a.Tenant.PlatformID, a.Tenant.Env, toMicros(a.AttemptedAt), a.URL, status,
		a.LatencyMS, a.ResponseExcerpt, a.Error)
	return err
}

// ListAttempts returns the latest limit attempts of an event, oldest first.
func (q Q) ListAttempts(ctx context.Context, t Tenant, eventID string, limit int) ([]Attempt, error) {
	rows, err := q.query(ctx, `SELECT id, attempted_at, url, status_code, latency_ms, response_excerpt, error
		FROM webhook_attempts WHERE platform_id = ? AND env = ? AND event_id = ? ORDER BY id DESC LIMIT ?`,
		t.PlatformID, t.Env, eventID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a := Attempt{EventID: eventID, Tenant: t}
		var at int64
		var status sql.NullInt64
		if err := rows.Scan(&a.ID, &at, &a.URL, &status, &a.LatencyMS, &a.ResponseExcerpt, &a.Error); err != nil {
			return nil, classify(err)
		}
		a.AttemptedAt, a.StatusCode = fromMicros(at), int(status.Int64)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
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
	if err := row.Scan(&e.ID, &e.Tenant.PlatformID, &e.Tenant.Env, &e.Type, &e.ResourceID, &env, &created,
		&dID, &dPlatform, &dEnv, &dState, &dAttempts, &dWindow, &dNext, &dToken, &dLease, &dDelivered, &dUpdated); err != nil {
		return out, classify(err)
	}
	e.Envelope, e.CreatedAt = []byte(env), fromMicros(created)
	out.Event = e
	if dID.Valid {
		out.Delivery = &Delivery{EventID: dID.String, Tenant: e.Tenant, State: dState.String, Attempts: int(dAttempts.Int64),
			WindowStart: fromMicros(dWindow.Int64), NextAttemptAt: fromMicros(dNext.Int64), LeaseToken: dToken.String,
			LeaseUntil: timePtr(dLease), DeliveredAt: timePtr(dDelivered), UpdatedAt: fromMicros(dUpdated.Int64)}
	}
	return out, nil
}

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
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM events e`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("e.id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+eventCols+`, `+deliveryCols+`
		FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id`+w.sql()+` ORDER BY e.id LIMIT ?`,
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

// GetEventWithDelivery returns one event of the tenant with its delivery.
func (q Q) GetEventWithDelivery(ctx context.Context, t Tenant, eventID string) (EventWithDelivery, error) {
	return scanEventWithDelivery(q.queryRow(ctx, `SELECT `+eventCols+`, `+deliveryCols+`
		FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
		WHERE e.platform_id = ? AND e.env = ? AND e.id = ?`, t.PlatformID, t.Env, eventID))
}

// PurgeEvents deletes up to batch events created before cutoff, with their
// deliveries and attempts, and reports how many events went. Events whose
// delivery is still PENDING are kept until it ends.
func (db *DB) PurgeEvents(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	var n int64
	err := db.InTx(ctx, func(tx *Tx) error {
		rows, err := tx.query(ctx, `SELECT e.id FROM events e WHERE e.created_at < ? AND NOT EXISTS
			(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'PENDING')
			ORDER BY e.created_at LIMIT ?`, toMicros(cutoff), batch)
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
		in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")"
		for _, stmt := range []string{
			`DELETE FROM webhook_attempts WHERE event_id IN ` + in,
			`DELETE FROM webhook_deliveries WHERE event_id IN ` + in,
			`DELETE FROM events WHERE id IN ` + in,
		} {
			res, err := tx.exec(ctx, stmt, ids...)
			if err != nil {
				return err
			}
			n, _ = res.RowsAffected() // the last statement's count: events
		}
		return nil
	})
	return n, err
}

// WebhookSecret is one of a tenant's Standard Webhooks secrets, stored in
// its "whsec_…" form. ExpiresAt is nil for the current secret.
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
	_, err := q.exec(ctx, `INSERT INTO webhook_secrets (id, platform_id, env, secret, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, s.ID, s.Tenant.PlatformID, s.Tenant.Env, s.Secret, toMicros(s.CreatedAt),
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
		s.CreatedAt, s.ExpiresAt = fromMicros(created), timePtr(expires)
		out = append(out, s)
	}
	return out, classify(rows.Err())
}

// ExpireCurrentWebhookSecret gives the tenant's current secret an expiry, so
// a new current secret can be inserted. ErrNotFound: there was none.
func (q Q) ExpireCurrentWebhookSecret(ctx context.Context, t Tenant, at time.Time) error {
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
// generate makes if there is none yet. When several nodes start at once,
// the first insert wins and every node reads that one.
func (db *DB) WebhookSigningKey(ctx context.Context, name string, generate func() ([]byte, error)) ([]byte, error) {
	var pem string
	err := db.Read().queryRow(ctx, `SELECT private_pem FROM webhook_signing_keys WHERE name = ?`, name).Scan(&pem)
	if err == nil {
		return []byte(pem), nil
	}
	if !errors.Is(classify(err), ErrNotFound) {
		return nil, classify(err)
	}
	fresh, err := generate()
	if err != nil {
		return nil, err
	}
	if _, err := db.Write().exec(ctx, `INSERT INTO webhook_signing_keys (name, private_pem, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, string(fresh), toMicros(db.now())); err != nil {
		return nil, err
	}
	if err := db.Read().queryRow(ctx, `SELECT private_pem FROM webhook_signing_keys WHERE name = ?`, name).Scan(&pem); err != nil {
		return nil, classify(err)
	}
	return []byte(pem), nil
}
