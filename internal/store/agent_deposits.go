package store

import (
	"context"
	"database/sql"
	"time"
)

// AgentDeposit is a deposit target an agent asked for (migration 0049).
type AgentDeposit struct {
	ID, AgentID, CustomerID, AccountID string
	Tenant                             Tenant
	TargetType, Target, Network        string
	Amount                             *int64 // nil: any amount (chain addresses)
	Currency, Status, TransactionID    string
	ExpiresAt, CreatedAt, UpdatedAt    time.Time
}

const agentDepositCols = `id, platform_id, env, agent_id, customer_id, account_id, target_type, target, network,
	amount, currency, status, transaction_id, expires_at, created_at, updated_at`

func scanAgentDeposit(row interface{ Scan(...any) error }) (AgentDeposit, error) {
	var d AgentDeposit
	var amount sql.NullInt64
	var expires, created, updated int64
	if err := row.Scan(&d.ID, &d.Tenant.PlatformID, &d.Tenant.Env, &d.AgentID, &d.CustomerID, &d.AccountID,
		&d.TargetType, &d.Target, &d.Network, &amount, &d.Currency, &d.Status, &d.TransactionID,
		&expires, &created, &updated); err != nil {
		return AgentDeposit{}, classify(err)
	}
	if amount.Valid {
		v := amount.Int64
		d.Amount = &v
	}
	d.ExpiresAt, d.CreatedAt, d.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	return d, nil
}

// InsertAgentDeposit stores a new deposit.
func (q Q) InsertAgentDeposit(ctx context.Context, d AgentDeposit) error {
	var amount sql.NullInt64
	if d.Amount != nil {
		amount = sql.NullInt64{Int64: *d.Amount, Valid: true}
	}
	_, err := q.exec(ctx, `INSERT INTO agent_deposits (`+agentDepositCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Tenant.PlatformID, d.Tenant.Env, d.AgentID, d.CustomerID, d.AccountID, d.TargetType, d.Target,
		d.Network, amount, d.Currency, d.Status, d.TransactionID, toMicros(d.ExpiresAt), toMicros(d.CreatedAt),
		toMicros(d.UpdatedAt))
	return err
}

// GetAgentDeposit reads one deposit of the tenant, locked until the end of
// the transaction when lock is set (PostgreSQL).
func (q Q) GetAgentDeposit(ctx context.Context, t Tenant, id string, lock bool) (AgentDeposit, error) {
	query := `SELECT ` + agentDepositCols + ` FROM agent_deposits WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanAgentDeposit(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// UpdateAgentDeposit writes a deposit's status and transaction.
func (q Q) UpdateAgentDeposit(ctx context.Context, d AgentDeposit) error {
	return affectedOne(q.exec(ctx, `UPDATE agent_deposits SET status = ?, transaction_id = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`,
		d.Status, d.TransactionID, toMicros(d.UpdatedAt), d.Tenant.PlatformID, d.Tenant.Env, d.ID))
}
