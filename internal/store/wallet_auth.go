package store

import (
	"context"
	"database/sql"
	"time"
)

// WalletCredential is one row of wallet_credentials (package wallets owns
// the rules). OTPHash is a SHA-256, never a code; OTPTargetSealed is the
// sealed HPKE target key.
type WalletCredential struct {
	ID              string
	Tenant          Tenant
	AccountID       string
	Type            string
	Nickname        string
	Identity        string
	Details         []byte
	OTPHash         string
	OTPExpiresAt    *time.Time
	OTPAttempts     int
	OTPTargetSealed string
	VerifiedAt      *time.Time
	RevokedAt       *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const walletCredentialCols = `id, platform_id, env, account_id, credential_type, nickname, identity, details, otp_hash,
	otp_expires_at, otp_attempts, otp_target_sealed, verified_at, revoked_at, created_at, updated_at`

func scanWalletCredential(row interface{ Scan(...any) error }) (WalletCredential, error) {
	var c WalletCredential
	var details string
	var otpExp, verified, revoked sql.NullInt64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.Tenant.PlatformID, &c.Tenant.Env, &c.AccountID, &c.Type, &c.Nickname, &c.Identity,
		&details, &c.OTPHash, &otpExp, &c.OTPAttempts, &c.OTPTargetSealed, &verified, &revoked, &created, &updated); err != nil {
		return WalletCredential{}, classify(err)
	}
	c.Details = []byte(details)
	c.OTPExpiresAt, c.VerifiedAt, c.RevokedAt = timePtr(otpExp), timePtr(verified), timePtr(revoked)
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

// InsertWalletCredential stores a credential. A second live OTP credential
// of a type on the wallet, or a live credential with the same identity in
// the tenant, is ErrConflict.
func (q Q) InsertWalletCredential(ctx context.Context, c WalletCredential) error {
	_, err := q.exec(ctx, `INSERT INTO wallet_credentials (`+walletCredentialCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Tenant.PlatformID, c.Tenant.Env, c.AccountID, c.Type, c.Nickname, c.Identity, string(c.Details),
		c.OTPHash, nullMicros(c.OTPExpiresAt), c.OTPAttempts, c.OTPTargetSealed, nullMicros(c.VerifiedAt),
		nullMicros(c.RevokedAt), toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
	return classify(err)
}

// UpdateWalletCredential writes back a credential's mutable state.
func (q Q) UpdateWalletCredential(ctx context.Context, c WalletCredential) error {
	res, err := q.exec(ctx, `UPDATE wallet_credentials SET nickname = ?, identity = ?, details = ?, otp_hash = ?,
		otp_expires_at = ?, otp_attempts = ?, otp_target_sealed = ?, verified_at = ?, revoked_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`,
		c.Nickname, c.Identity, string(c.Details), c.OTPHash, nullMicros(c.OTPExpiresAt), c.OTPAttempts,
		c.OTPTargetSealed, nullMicros(c.VerifiedAt), nullMicros(c.RevokedAt), toMicros(c.UpdatedAt),
		c.Tenant.PlatformID, c.Tenant.Env, c.ID)
	if err != nil {
		return classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return err
		}
		return ErrNotFound
	}
	return nil
}

// GetWalletCredential returns a credential of the tenant (revoked ones too;
// lock takes a row lock on PostgreSQL).
func (q Q) GetWalletCredential(ctx context.Context, t Tenant, id string, lock bool) (WalletCredential, error) {
	query := `SELECT ` + walletCredentialCols + ` FROM wallet_credentials WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanWalletCredential(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// WalletCredentials returns the live credentials of a wallet, oldest first.
func (q Q) WalletCredentials(ctx context.Context, t Tenant, accountID string) ([]WalletCredential, error) {
	rows, err := q.query(ctx, `SELECT `+walletCredentialCols+` FROM wallet_credentials
		WHERE platform_id = ? AND env = ? AND account_id = ? AND revoked_at IS NULL ORDER BY id`,
		t.PlatformID, t.Env, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WalletCredential
	for rows.Next() {
		c, err := scanWalletCredential(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// WalletSession is one row of wallet_sessions.
type WalletSession struct {
	ID           string
	Tenant       Tenant
	AccountID    string
	CredentialID string
	PublicKey    string
	ExpiresAt    time.Time
	RevokedAt    *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const walletSessionCols = `id, platform_id, env, account_id, credential_id, public_key, expires_at, revoked_at,
	created_at, updated_at`

func scanWalletSession(row interface{ Scan(...any) error }) (WalletSession, error) {
	var s WalletSession
	var expires, created, updated int64
	var revoked sql.NullInt64
	if err := row.Scan(&s.ID, &s.Tenant.PlatformID, &s.Tenant.Env, &s.AccountID, &s.CredentialID, &s.PublicKey,
		&expires, &revoked, &created, &updated); err != nil {
		return WalletSession{}, classify(err)
	}
	s.ExpiresAt, s.RevokedAt = fromMicros(expires), timePtr(revoked)
	s.CreatedAt, s.UpdatedAt = fromMicros(created), fromMicros(updated)
	return s, nil
}

// InsertWalletSession stores a session.
func (q Q) InsertWalletSession(ctx context.Context, s WalletSession) error {
	_, err := q.exec(ctx, `INSERT INTO wallet_sessions (`+walletSessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Tenant.PlatformID, s.Tenant.Env, s.AccountID, s.CredentialID, s.PublicKey, toMicros(s.ExpiresAt),
		nullMicros(s.RevokedAt), toMicros(s.CreatedAt), toMicros(s.UpdatedAt))
	return classify(err)
}

// GetWalletSession returns a session of the tenant, revoked or expired too.
func (q Q) GetWalletSession(ctx context.Context, t Tenant, id string) (WalletSession, error) {
	return scanWalletSession(q.queryRow(ctx, `SELECT `+walletSessionCols+` FROM wallet_sessions
		WHERE platform_id = ? AND env = ? AND id = ?`+q.forUpdate(), t.PlatformID, t.Env, id))
}

// ActiveWalletSessions returns the sessions of a wallet that are neither
// revoked nor expired at now and whose credential is live and verified,
// oldest first; publicKey, when not empty, keeps those bound to that key.
func (q Q) ActiveWalletSessions(ctx context.Context, t Tenant, accountID, publicKey string, now time.Time) ([]WalletSession, error) {
	w := where{}
	w.add("s.platform_id = ?", t.PlatformID)
	w.add("s.env = ?", t.Env)
	w.add("s.account_id = ?", accountID)
	w.add("s.revoked_at IS NULL")
	w.add("s.expires_at > ?", toMicros(now))
	w.add(`EXISTS (SELECT 1 FROM wallet_credentials c WHERE c.id = s.credential_id
		AND c.revoked_at IS NULL AND c.verified_at IS NOT NULL)`)
	if publicKey != "" {
		w.add("s.public_key = ?", publicKey)
	}
	rows, err := q.query(ctx, `SELECT s.id, s.platform_id, s.env, s.account_id, s.credential_id, s.public_key,
		s.expires_at, s.revoked_at, s.created_at, s.updated_at FROM wallet_sessions s`+w.sql()+` ORDER BY s.id`, w.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WalletSession
	for rows.Next() {
		s, err := scanWalletSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, classify(rows.Err())
}

// RevokeWalletSessions revokes the live sessions of a wallet: all of them,
// those of one credential (credentialID), or one session (sessionID).
func (q Q) RevokeWalletSessions(ctx context.Context, t Tenant, accountID, credentialID, sessionID string, at time.Time) (int64, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("account_id = ?", accountID)
	w.add("revoked_at IS NULL")
	if credentialID != "" {
		w.add("credential_id = ?", credentialID)
	}
	if sessionID != "" {
		w.add("id = ?", sessionID)
	}
	res, err := q.exec(ctx, `UPDATE wallet_sessions SET revoked_at = ?, updated_at = ?`+w.sql(),
		append([]any{toMicros(at), toMicros(at)}, w.args...)...)
	if err != nil {
		return 0, classify(err)
	}
	return res.RowsAffected()
}

// WalletCredentialIdentityTaken reports whether a live credential of the
// tenant of that type has that identity (checked before an insert, because
// on PostgreSQL a failed insert would abort the transaction).
func (q Q) WalletCredentialIdentityTaken(ctx context.Context, t Tenant, typ, identity string) (bool, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM wallet_credentials WHERE platform_id = ? AND env = ?
		AND credential_type = ? AND identity = ? AND revoked_at IS NULL`, t.PlatformID, t.Env, typ, identity).Scan(&n)
	return n > 0, classify(err)
}

// WalletAuthDigest is a text digest of a tenant's signed requests,
// credentials and sessions (every column that changes), so a check can tell
// that a refused request changed none of them.
func (q Q) WalletAuthDigest(ctx context.Context, t Tenant) (string, error) {
	var b []byte
	for _, query := range []string{
		`SELECT id, status, result, COALESCE(completed_at, 0) FROM signed_requests WHERE platform_id = ? AND env = ? ORDER BY id`,
		`SELECT id, otp_hash, otp_attempts, COALESCE(verified_at, 0), COALESCE(revoked_at, 0) FROM wallet_credentials
			WHERE platform_id = ? AND env = ? ORDER BY id`,
		`SELECT id, public_key, expires_at, COALESCE(revoked_at, 0) FROM wallet_sessions WHERE platform_id = ? AND env = ? ORDER BY id`,
	} {
		rows, err := q.query(ctx, query, t.PlatformID, t.Env)
		if err != nil {
			return "", err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", classify(err)
			}
			for _, v := range vals {
				b = append(b, v.String+"|"...)
			}
			b = append(b, '\n')
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return "", classify(err)
		}
	}
	return string(b), nil
}

// Kinds of single-use proofs.
const (
	ProofPasskeyChallenge = "PASSKEY_CHALLENGE"
	ProofOIDCToken        = "OIDC_TOKEN"
)

// UseProof records a single-use proof (its SHA-256, hex) as used by the
// credential; a proof used before is ErrConflict.
func (q Q) UseProof(ctx context.Context, t Tenant, kind, digest, credentialID string, at time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO wallet_used_proofs (platform_id, env, kind, digest, credential_id, used_at)
		VALUES (?, ?, ?, ?, ?, ?)`, t.PlatformID, t.Env, kind, digest, credentialID, toMicros(at))
	return classify(err)
}
