package store

import (
	"context"
	"database/sql"
	"time"
)

// AgentAction is one row of agent_actions. Details is the JSON the action
// type keeps (a transfer's accounts and amount).
type AgentAction struct {
	ID              string
	Tenant          Tenant
	AgentID         string
	CustomerID      string
	Type            string
	Status          string
	NeedsApproval   bool
	QuoteID         string
	TransactionID   string
	Amount          int64
	Details         []byte
	RejectionReason string
	FailureReason   string
	ExpiresAt       *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const agentActionCols = `id, platform_id, env, agent_id, customer_id, type, status, needs_approval, quote_id,
	transaction_id, amount, details, rejection_reason, failure_reason, expires_at, created_at, updated_at`

func scanAgentAction(row interface{ Scan(...any) error }) (AgentAction, error) {
	var a AgentAction
	var details string
	var expires sql.NullInt64
	var created, updated int64
	if err := row.Scan(&a.ID, &a.Tenant.PlatformID, &a.Tenant.Env, &a.AgentID, &a.CustomerID, &a.Type, &a.Status,
		&a.NeedsApproval, &a.QuoteID, &a.TransactionID, &a.Amount, &details, &a.RejectionReason, &a.FailureReason,
		&expires, &created, &updated); err != nil {
		return AgentAction{}, classify(err)
	}
	a.Details, a.ExpiresAt = []byte(details), timePtr(expires)
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, nil
}

// InsertAgentAction stores a new action.
func (q Q) InsertAgentAction(ctx context.Context, a AgentAction) error {
	if len(a.Details) == 0 {
		a.Details = []byte("{}")
	}
	_, err := q.exec(ctx, `INSERT INTO agent_actions (`+agentActionCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tenant.PlatformID, a.Tenant.Env, a.AgentID, a.CustomerID, a.Type, a.Status, a.NeedsApproval,
		a.QuoteID, a.TransactionID, a.Amount, string(a.Details), a.RejectionReason, a.FailureReason,
		nullMicros(a.ExpiresAt), toMicros(a.CreatedAt), toMicros(a.UpdatedAt))
	return classify(err)
}

// GetAgentAction returns an action of the tenant (lock: row lock on
// PostgreSQL).
func (q Q) GetAgentAction(ctx context.Context, t Tenant, id string, lock bool) (AgentAction, error) {
	query := `SELECT ` + agentActionCols + ` FROM agent_actions WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanAgentAction(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// UpdateAgentAction writes an action's outcome.
func (q Q) UpdateAgentAction(ctx context.Context, a AgentAction) error {
	return affectedOne(q.exec(ctx, `UPDATE agent_actions SET status = ?, transaction_id = ?, details = ?, rejection_reason = ?,
		failure_reason = ?, updated_at = ? WHERE platform_id = ? AND env = ? AND id = ?`,
		a.Status, a.TransactionID, detailsOf(a.Details), a.RejectionReason, a.FailureReason, toMicros(a.UpdatedAt),
		a.Tenant.PlatformID, a.Tenant.Env, a.ID))
}

// AgentActionFilter narrows ListAgentActions.
type AgentActionFilter struct {
	AgentID, CustomerID string
	// Approvals keeps only the actions the policy sent for approval.
	Approvals bool
	From, To  *time.Time // inclusive bounds on created_at
	Desc      bool
}

// ListAgentActions returns up to limit actions after the id after in the
// filter's order (ids grow with time), and how many match.
func (q Q) ListAgentActions(ctx context.Context, t Tenant, f AgentActionFilter, after string, limit int) ([]AgentAction, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if f.Approvals {
		w.add("needs_approval = ?", true)
	}
	if f.AgentID != "" {
		w.add("agent_id = ?", f.AgentID)
	}
	if f.CustomerID != "" {
		w.add("customer_id = ?", f.CustomerID)
	}
	w.timeRange("created_at", f.From, f.To)
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM agent_actions`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	order := " ORDER BY id"
	if after != "" {
		if f.Desc {
			w.add("id < ?", after)
		} else {
			w.add("id > ?", after)
		}
	}
	if f.Desc {
		order += " DESC"
	}
	rows, err := q.query(ctx, `SELECT `+agentActionCols+` FROM agent_actions`+w.sql()+order+` LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []AgentAction
	for rows.Next() {
		a, err := scanAgentAction(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, classify(rows.Err())
}

// DueAgentActions returns up to limit PENDING_APPROVAL actions of any
// tenant whose expiresAt is at or before now.
func (q Q) DueAgentActions(ctx context.Context, now time.Time, limit int) ([]AgentAction, error) {
	rows, err := q.query(ctx, `SELECT `+agentActionCols+` FROM agent_actions WHERE status = 'PENDING_APPROVAL'
		AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`, toMicros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentAction
	for rows.Next() {
		a, err := scanAgentAction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, classify(rows.Err())
}

// OpenAgentActionForQuote returns the id of the quote's action that is
// waiting or approved, or "".
func (q Q) OpenAgentActionForQuote(ctx context.Context, t Tenant, quoteID string) (string, error) {
	var id string
	err := q.queryRow(ctx, `SELECT id FROM agent_actions WHERE platform_id = ? AND env = ? AND quote_id = ?
		AND status IN ('PENDING_APPROVAL', 'APPROVED') LIMIT 1`, t.PlatformID, t.Env, quoteID).Scan(&id)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return id, classify(err)
}

// detailsOf is the stored form of an action's details ("{}" when none).
func detailsOf(d []byte) string {
	if len(d) == 0 {
		return "{}"
	}
	return string(d)
}
