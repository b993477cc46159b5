package store

import (
	"context"
	"database/sql"
	"time"
)

// Agent is one row of agents. Policy is the policy's JSON document.
type Agent struct {
	ID          string
	Tenant      Tenant
	CustomerID  string
	Name        string
	Paused      bool
	Policy      []byte
	TokenHash   string
	ConnectedAt *time.Time
	DeletedAt   *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const agentCols = `id, platform_id, env, customer_id, name, paused, policy, token_hash, connected_at, deleted_at,
	created_at, updated_at`

func scanAgent(row interface{ Scan(...any) error }) (Agent, error) {
	var a Agent
	var policy string
	var connected, deleted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&a.ID, &a.Tenant.PlatformID, &a.Tenant.Env, &a.CustomerID, &a.Name, &a.Paused, &policy,
		&a.TokenHash, &connected, &deleted, &created, &updated); err != nil {
		return Agent{}, classify(err)
	}
	a.Policy = []byte(policy)
	a.ConnectedAt, a.DeletedAt = timePtr(connected), timePtr(deleted)
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, nil
}

// InsertAgent stores a new agent.
func (q Q) InsertAgent(ctx context.Context, a Agent) error {
	_, err := q.exec(ctx, `INSERT INTO agents (`+agentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tenant.PlatformID, a.Tenant.Env, a.CustomerID, a.Name, a.Paused, string(a.Policy), a.TokenHash,
		nullMicros(a.ConnectedAt), nullMicros(a.DeletedAt), toMicros(a.CreatedAt), toMicros(a.UpdatedAt))
	return classify(err)
}

// GetAgent returns a live (not deleted) agent of the tenant (lock: row lock
// on PostgreSQL).
func (q Q) GetAgent(ctx context.Context, t Tenant, id string, lock bool) (Agent, error) {
	query := `SELECT ` + agentCols + ` FROM agents WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`
	if lock {
		query += q.forUpdate()
	}
	return scanAgent(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// AgentByToken returns the live agent holding the access token hash, in
// any tenant (the bearer token names its tenant).
func (q Q) AgentByToken(ctx context.Context, tokenHash string) (Agent, error) {
	return scanAgent(q.queryRow(ctx, `SELECT `+agentCols+` FROM agents WHERE token_hash = ? AND token_hash <> ''
		AND deleted_at IS NULL`, tokenHash))
}

// UpdateAgent writes an agent's mutable columns.
func (q Q) UpdateAgent(ctx context.Context, a Agent) error {
	return affectedOne(q.exec(ctx, `UPDATE agents SET name = ?, paused = ?, policy = ?, token_hash = ?, connected_at = ?,
		deleted_at = ?, updated_at = ? WHERE platform_id = ? AND env = ? AND id = ?`,
		a.Name, a.Paused, string(a.Policy), a.TokenHash, nullMicros(a.ConnectedAt), nullMicros(a.DeletedAt),
		toMicros(a.UpdatedAt), a.Tenant.PlatformID, a.Tenant.Env, a.ID))
}

// AgentFilter narrows ListAgents; nil fields do not filter.
type AgentFilter struct {
	CustomerID                  string
	Paused, Connected           *bool
	CreatedAfter, CreatedBefore *time.Time
	UpdatedAfter, UpdatedBefore *time.Time
}

// ListAgents returns up to limit live agents after the id after, oldest
// first, and how many match.
func (q Q) ListAgents(ctx context.Context, t Tenant, f AgentFilter, after string, limit int) ([]Agent, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("deleted_at IS NULL")
	if f.CustomerID != "" {
		w.add("customer_id = ?", f.CustomerID)
	}
	if f.Paused != nil {
		w.add("paused = ?", *f.Paused)
	}
	if f.Connected != nil {
		if *f.Connected {
			w.add("connected_at IS NOT NULL")
		} else {
			w.add("connected_at IS NULL")
		}
	}
	w.timeRange("created_at", f.CreatedAfter, f.CreatedBefore)
	w.timeRange("updated_at", f.UpdatedAfter, f.UpdatedBefore)
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM agents`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+agentCols+` FROM agents`+w.sql()+` ORDER BY id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Agent
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, classify(rows.Err())
}

// AgentDeviceCode is one row of agent_device_codes.
type AgentDeviceCode struct {
	CodeHash      string
	Tenant        Tenant
	AgentID       string
	ExpiresAt     time.Time
	RedeemedAt    *time.Time
	InvalidatedAt *time.Time
	CreatedAt     time.Time
}

const deviceCodeCols = `code_hash, platform_id, env, agent_id, expires_at, redeemed_at, invalidated_at, created_at`

func scanDeviceCode(row interface{ Scan(...any) error }) (AgentDeviceCode, error) {
	var c AgentDeviceCode
	var expires, created int64
	var redeemed, invalidated sql.NullInt64
	if err := row.Scan(&c.CodeHash, &c.Tenant.PlatformID, &c.Tenant.Env, &c.AgentID, &expires, &redeemed,
		&invalidated, &created); err != nil {
		return AgentDeviceCode{}, classify(err)
	}
	c.ExpiresAt, c.CreatedAt = fromMicros(expires), fromMicros(created)
	c.RedeemedAt, c.InvalidatedAt = timePtr(redeemed), timePtr(invalidated)
	return c, nil
}

// InsertAgentDeviceCode stores a device code's hash.
func (q Q) InsertAgentDeviceCode(ctx context.Context, c AgentDeviceCode) error {
	_, err := q.exec(ctx, `INSERT INTO agent_device_codes (`+deviceCodeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		c.CodeHash, c.Tenant.PlatformID, c.Tenant.Env, c.AgentID, toMicros(c.ExpiresAt), nullMicros(c.RedeemedAt),
		nullMicros(c.InvalidatedAt), toMicros(c.CreatedAt))
	return classify(err)
}

// AgentDeviceCodeByHash returns the device code with this hash, in any
// tenant (lock: row lock on PostgreSQL).
func (q Q) AgentDeviceCodeByHash(ctx context.Context, hash string, lock bool) (AgentDeviceCode, error) {
	query := `SELECT ` + deviceCodeCols + ` FROM agent_device_codes WHERE code_hash = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanDeviceCode(q.queryRow(ctx, query, hash))
}

// InvalidateAgentDeviceCodes invalidates the agent's unredeemed, still
// valid codes.
func (q Q) InvalidateAgentDeviceCodes(ctx context.Context, agentID string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE agent_device_codes SET invalidated_at = ? WHERE agent_id = ? AND redeemed_at IS NULL
		AND invalidated_at IS NULL`, toMicros(at), agentID)
	return classify(err)
}

// RedeemAgentDeviceCode marks a code redeemed unless it already was, was
// invalidated or has expired; it reports whether this call redeemed it.
func (q Q) RedeemAgentDeviceCode(ctx context.Context, hash string, at time.Time) (bool, error) {
	res, err := q.exec(ctx, `UPDATE agent_device_codes SET redeemed_at = ? WHERE code_hash = ? AND redeemed_at IS NULL
		AND invalidated_at IS NULL AND expires_at > ?`, toMicros(at), hash, toMicros(at))
	if err != nil {
		return false, classify(err)
	}
	n, err := res.RowsAffected()
	return n == 1, classify(err)
}

// AgentUsage is the agent's spending in one period.
type AgentUsage struct {
	Spent, Count int64
}

// GetAgentUsage returns the agent's usage in a period (zero when none).
func (q Q) GetAgentUsage(ctx context.Context, agentID, period string) (AgentUsage, error) {
	var u AgentUsage
	err := q.queryRow(ctx, `SELECT spent, txn_count FROM agent_usage WHERE agent_id = ? AND period = ?`,
		agentID, period).Scan(&u.Spent, &u.Count)
	if err == sql.ErrNoRows {
		return AgentUsage{}, nil
	}
	return u, classify(err)
}

// AddAgentUsage adds amount and one transaction to the agent's usage in a
// period unless the result would pass maxSpent or maxCount (negative: no
// limit). It changes nothing and reports false when it would. The row stays
// locked until the transaction ends on PostgreSQL: callers add the day
// before the month, always, so two executions never wait on each other in
// opposite orders.
func (q Q) AddAgentUsage(ctx context.Context, agentID, period string, amount, maxSpent, maxCount int64) (bool, error) {
	if _, err := q.exec(ctx, `INSERT INTO agent_usage (agent_id, period, spent, txn_count) VALUES (?, ?, 0, 0)
		ON CONFLICT (agent_id, period) DO NOTHING`, agentID, period); err != nil {
		return false, classify(err)
	}
	res, err := q.exec(ctx, `UPDATE agent_usage SET spent = spent + ?, txn_count = txn_count + 1
		WHERE agent_id = ? AND period = ? AND (? < 0 OR spent + ? <= ?) AND (? < 0 OR txn_count + 1 <= ?)`,
		amount, agentID, period, maxSpent, amount, maxSpent, maxCount, maxCount)
	if err != nil {
		return false, classify(err)
	}
	n, err := res.RowsAffected()
	return n == 1, classify(err)
}
