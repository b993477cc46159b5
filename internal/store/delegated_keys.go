package store

import (
	"context"
	"time"
)

// DelegatedKey is one row of delegated_keys. SealedPrivateKey is opaque
// here (package wallets seals it).
type DelegatedKey struct {
	ID               string
	Tenant           Tenant
	AccountID        string
	CardID           string
	FundingSourceID  string
	AgentID          string
	PublicKey        string
	SealedPrivateKey string
	Nickname         string
	Status           string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

const delegatedKeyCols = `id, platform_id, env, account_id, card_id, funding_source_id, agent_id, public_key,
	sealed_private_key, nickname, status, created_at, updated_at`

func scanDelegatedKey(row interface{ Scan(...any) error }) (DelegatedKey, error) {
	var k DelegatedKey
	var created, updated int64
	if err := row.Scan(&k.ID, &k.Tenant.PlatformID, &k.Tenant.Env, &k.AccountID, &k.CardID, &k.FundingSourceID,
		&k.AgentID, &k.PublicKey, &k.SealedPrivateKey, &k.Nickname, &k.Status, &created, &updated); err != nil {
		return DelegatedKey{}, classify(err)
	}
	k.CreatedAt, k.UpdatedAt = fromMicros(created), fromMicros(updated)
	return k, nil
}

// InsertDelegatedKey stores a delegated key.
func (q Q) InsertDelegatedKey(ctx context.Context, k DelegatedKey) error {
	_, err := q.exec(ctx, `INSERT INTO delegated_keys (`+delegatedKeyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Tenant.PlatformID, k.Tenant.Env, k.AccountID, k.CardID, k.FundingSourceID, k.AgentID, k.PublicKey,
		k.SealedPrivateKey, k.Nickname, k.Status, toMicros(k.CreatedAt), toMicros(k.UpdatedAt))
	return classify(err)
}

// GetDelegatedKey returns a key of the tenant (lock: row lock on
// PostgreSQL).
func (q Q) GetDelegatedKey(ctx context.Context, t Tenant, id string, lock bool) (DelegatedKey, error) {
	query := `SELECT ` + delegatedKeyCols + ` FROM delegated_keys WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanDelegatedKey(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// SetDelegatedKeyStatus changes a key's status.
func (q Q) SetDelegatedKeyStatus(ctx context.Context, t Tenant, id, status string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE delegated_keys SET status = ?, updated_at = ? WHERE platform_id = ? AND env = ? AND id = ?`,
		status, toMicros(at), t.PlatformID, t.Env, id)
	return classify(err)
}

// ListDelegatedKeys returns the tenant's keys of an account and/or a card
// funding source (empty filters do not filter), every status, oldest first.
func (q Q) ListDelegatedKeys(ctx context.Context, t Tenant, accountID, fundingSourceID string) ([]DelegatedKey, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if accountID != "" {
		w.add("account_id = ?", accountID)
	}
	if fundingSourceID != "" {
		w.add("funding_source_id = ?", fundingSourceID)
	}
	rows, err := q.query(ctx, `SELECT `+delegatedKeyCols+` FROM delegated_keys`+w.sql()+` ORDER BY id`, w.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DelegatedKey
	for rows.Next() {
		k, err := scanDelegatedKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, classify(rows.Err())
}
