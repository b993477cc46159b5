package store

import (
	"context"
	"time"
)

// WalletKey is one row of wallet_keys: an embedded wallet's signing key.
// SealedPrivateKey is opaque here (package wallets seals and opens it).
type WalletKey struct {
	AccountID        string
	Tenant           Tenant
	PublicKey        string
	SealedPrivateKey string
	CreatedAt        time.Time
}

// InsertWalletKey stores a wallet's signing key; a second key for the same
// wallet is ErrConflict.
func (q Q) InsertWalletKey(ctx context.Context, k WalletKey) error {
	_, err := q.exec(ctx, `INSERT INTO wallet_keys (account_id, platform_id, env, public_key, sealed_private_key, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, k.AccountID, k.Tenant.PlatformID, k.Tenant.Env, k.PublicKey, k.SealedPrivateKey,
		toMicros(k.CreatedAt))
	return classify(err)
}

// GetWalletKey returns the signing key of a wallet of the tenant.
func (q Q) GetWalletKey(ctx context.Context, t Tenant, accountID string) (WalletKey, error) {
	k := WalletKey{AccountID: accountID, Tenant: t}
	var created int64
	err := q.queryRow(ctx, `SELECT public_key, sealed_private_key, created_at FROM wallet_keys
		WHERE platform_id = ? AND env = ? AND account_id = ?`, t.PlatformID, t.Env, accountID).
		Scan(&k.PublicKey, &k.SealedPrivateKey, &created)
	if err != nil {
		return WalletKey{}, classify(err)
	}
	k.CreatedAt = fromMicros(created)
	return k, nil
}

// CustomersWithoutWallet returns up to limit live customers of the tenant
// (only customerID when it is not empty) that have no EMBEDDED_WALLET account
// in currency cur.
func (q Q) CustomersWithoutWallet(ctx context.Context, t Tenant, customerID, cur string, limit int) ([]string, error) {
	w := where{}
	w.add("c.platform_id = ?", t.PlatformID)
	w.add("c.env = ?", t.Env)
	w.add("c.deleted_at IS NULL")
	if customerID != "" {
		w.add("c.id = ?", customerID)
	}
	w.add(`NOT EXISTS (SELECT 1 FROM internal_accounts a WHERE a.platform_id = c.platform_id AND a.env = c.env
		AND a.owner_key = c.id AND a.account_type = 'EMBEDDED_WALLET' AND a.currency = ?)`, cur)
	rows, err := q.query(ctx, `SELECT c.id FROM customers c`+w.sql()+` ORDER BY c.id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, classify(err)
		}
		out = append(out, s)
	}
	return out, classify(rows.Err())
}

// SetInternalAccountPrivate sets an embedded wallet's privacy setting and
// returns the updated row.
func (q Q) SetInternalAccountPrivate(ctx context.Context, t Tenant, accountID string, enabled bool, at time.Time) (InternalAccount, error) {
	return scanInternalAccount(q.queryRow(ctx, `UPDATE internal_accounts SET private_enabled = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND account_type = 'EMBEDDED_WALLET'
		RETURNING `+internalAccountSelect, enabled, toMicros(at), t.PlatformID, t.Env, accountID))
}
