package store

import (
	"context"
	"database/sql"
	"time"
)

// ScaCustomer is one row of sca_customers (migration 0031): a customer's
// SCA state as package sca's JSON document.
type ScaCustomer struct {
	Tenant     Tenant
	CustomerID string
	Document   []byte
	UpdatedAt  time.Time
}

// GetScaCustomer returns a customer's SCA state (ErrNotFound when it has
// none yet); lock takes a row lock on PostgreSQL until the transaction ends.
func (q Q) GetScaCustomer(ctx context.Context, t Tenant, customerID string, lock bool) (ScaCustomer, error) {
	query := `SELECT document, updated_at FROM sca_customers WHERE platform_id = ? AND env = ? AND customer_id = ?`
	if lock {
		query += q.forUpdate()
	}
	c := ScaCustomer{Tenant: t, CustomerID: customerID}
	var doc string
	var updated int64
	if err := q.queryRow(ctx, query, t.PlatformID, t.Env, customerID).Scan(&doc, &updated); err != nil {
		return ScaCustomer{}, classify(err)
	}
	c.Document, c.UpdatedAt = []byte(doc), fromMicros(updated)
	return c, nil
}

// PutScaCustomer inserts or replaces a customer's SCA state.
func (q Q) PutScaCustomer(ctx context.Context, c ScaCustomer) error {
	_, err := q.exec(ctx, `INSERT INTO sca_customers (platform_id, env, customer_id, document, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (platform_id, env, customer_id)
		DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		c.Tenant.PlatformID, c.Tenant.Env, c.CustomerID, string(c.Document), toMicros(c.UpdatedAt))
	return classify(err)
}

// ScaChallenge is one row of sca_challenges: Document is package sca's
// JSON of the challenge as the API shows it.
type ScaChallenge struct {
	ID         string
	Tenant     Tenant
	CustomerID string
	QuoteID    string
	Purpose    string
	Factor     string
	Binding    string
	CodeHash   string
	Step       int
	Steps      int
	Status     string
	Document   []byte
	ExpiresAt  time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const scaChallengeCols = `id, platform_id, env, customer_id, quote_id, purpose, factor, binding, code_hash, step, steps,
	status, document, expires_at, created_at, updated_at`

func scanScaChallenge(row interface{ Scan(...any) error }) (ScaChallenge, error) {
	var c ScaChallenge
	var doc string
	var expires, created, updated int64
	if err := row.Scan(&c.ID, &c.Tenant.PlatformID, &c.Tenant.Env, &c.CustomerID, &c.QuoteID, &c.Purpose, &c.Factor,
		&c.Binding, &c.CodeHash, &c.Step, &c.Steps, &c.Status, &doc, &expires, &created, &updated); err != nil {
		return ScaChallenge{}, classify(err)
	}
	c.Document = []byte(doc)
	c.ExpiresAt, c.CreatedAt, c.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	return c, nil
}

// InsertScaChallenge stores a new challenge.
func (q Q) InsertScaChallenge(ctx context.Context, c ScaChallenge) error {
	_, err := q.exec(ctx, `INSERT INTO sca_challenges (`+scaChallengeCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Tenant.PlatformID, c.Tenant.Env, c.CustomerID, c.QuoteID, c.Purpose, c.Factor, c.Binding, c.CodeHash,
		c.Step, c.Steps, c.Status, string(c.Document), toMicros(c.ExpiresAt), toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
	return classify(err)
}

// UpdateScaChallenge writes back a challenge's factor, code, status and
// document.
func (q Q) UpdateScaChallenge(ctx context.Context, c ScaChallenge) error {
	res, err := q.exec(ctx, `UPDATE sca_challenges SET factor = ?, code_hash = ?, status = ?, document = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`, c.Factor, c.CodeHash, c.Status, string(c.Document),
		toMicros(c.UpdatedAt), c.Tenant.PlatformID, c.Tenant.Env, c.ID)
	if err != nil {
		return classify(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// LatestScaChallenge returns the quote's challenge of the highest step
// (ErrNotFound when it has none); lock locks it on PostgreSQL.
func (q Q) LatestScaChallenge(ctx context.Context, t Tenant, quoteID string, lock bool) (ScaChallenge, error) {
	query := `SELECT ` + scaChallengeCols + ` FROM sca_challenges WHERE platform_id = ? AND env = ? AND quote_id = ?
		ORDER BY step DESC, created_at DESC LIMIT 1`
	if lock {
		query += q.forUpdate()
	}
	return scanScaChallenge(q.queryRow(ctx, query, t.PlatformID, t.Env, quoteID))
}

// ScaDecision is one row of sca_decisions.
type ScaDecision struct {
	ID          string
	Tenant      Tenant
	CustomerID  string
	Kind        string
	Factor      string
	Outcome     string
	Reason      string
	QuoteID     string
	ChallengeID string
	CreatedAt   time.Time
}

// InsertScaDecision records one decision.
func (q Q) InsertScaDecision(ctx context.Context, d ScaDecision) error {
	_, err := q.exec(ctx, `INSERT INTO sca_decisions (id, platform_id, env, customer_id, kind, factor, outcome, reason,
		quote_id, challenge_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, d.Tenant.PlatformID,
		d.Tenant.Env, d.CustomerID, d.Kind, d.Factor, d.Outcome, d.Reason, d.QuoteID, d.ChallengeID, toMicros(d.CreatedAt))
	return classify(err)
}

// ScaDecisions lists a customer's decisions, oldest first, at most limit.
func (q Q) ScaDecisions(ctx context.Context, t Tenant, customerID string, limit int) ([]ScaDecision, error) {
	rows, err := q.query(ctx, `SELECT id, customer_id, kind, factor, outcome, reason, quote_id, challenge_id, created_at
		FROM sca_decisions WHERE platform_id = ? AND env = ? AND customer_id = ? ORDER BY created_at, id LIMIT ?`,
		t.PlatformID, t.Env, customerID, limit)
	if err != nil {
		return nil, err
	}
	var out []ScaDecision
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		d := ScaDecision{Tenant: t}
		var created int64
		if err := r.Scan(&d.ID, &d.CustomerID, &d.Kind, &d.Factor, &d.Outcome, &d.Reason, &d.QuoteID, &d.ChallengeID,
			&created); err != nil {
			return err
		}
		d.CreatedAt = fromMicros(created)
		out = append(out, d)
		return nil
	})
	return out, err
}

// ScaSettings returns the tenant's SCA settings document (nil when it has
// none), from memory when it was read recently: every payment from a
// customer reads it (sca.Service.Settings), and it rarely changes. Callers
// must not modify the document. Inside a transaction, call it on the Tx
// (see DailyVolumeLimit).
func (q Q) ScaSettings(ctx context.Context, t Tenant) ([]byte, error) {
	load := func(ctx context.Context) ([]byte, error) {
		var doc string
		err := q.queryRow(ctx, `SELECT document FROM sca_settings WHERE platform_id = ? AND env = ?`,
			t.PlatformID, t.Env).Scan(&doc)
		if err == sql.ErrNoRows {
			return nil, nil
		}
		if err != nil {
			return nil, classify(err)
		}
		return []byte(doc), nil
	}
	if q.settings == nil {
		return load(ctx)
	}
	return get(ctx, q.settings, settingKey{kind: settingSca, tenant: t}, load)
}

// PutScaSettings stores the tenant's SCA settings document.
func (q Q) PutScaSettings(ctx context.Context, t Tenant, doc []byte, at time.Time) error {
	defer q.changed(settingKey{kind: settingSca, tenant: t})
	_, err := q.exec(ctx, `INSERT INTO sca_settings (platform_id, env, document, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (platform_id, env) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		t.PlatformID, t.Env, string(doc), toMicros(at))
	return classify(err)
}
