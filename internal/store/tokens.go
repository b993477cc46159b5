package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Token is an API credential. The secret itself is never stored, only its hash.
type Token struct {
	ID          string
	PlatformID  string
	Env         string
	ClientID    string
	SecretHash  string
	Name        string
	Permissions []string
	ExpiresAt   *time.Time
	DeletedAt   *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const tokenCols = `id, platform_id, env, client_id, secret_hash, name, permissions, expires_at, deleted_at, created_at, updated_at`

func scanToken(row interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var perms string
	var expires, deleted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&t.ID, &t.PlatformID, &t.Env, &t.ClientID, &t.SecretHash, &t.Name, &perms,
		&expires, &deleted, &created, &updated); err != nil {
		return Token{}, classify(err)
	}
	if perms != "" {
		t.Permissions = strings.Split(perms, ",")
	}
	t.ExpiresAt, t.DeletedAt = timePtr(expires), timePtr(deleted)
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return t, nil
}

// InsertToken stores a new token; a taken client id is ErrConflict.
func (q Q) InsertToken(ctx context.Context, t Token) error {
	_, err := q.exec(ctx, `INSERT INTO api_tokens (`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.PlatformID, t.Env, t.ClientID, t.SecretHash, t.Name, strings.Join(t.Permissions, ","),
		nullMicros(t.ExpiresAt), nullMicros(t.DeletedAt), toMicros(t.CreatedAt), toMicros(t.UpdatedAt))
	return err
}

// TokenByClientID finds a token, deleted or not, by its Basic-auth username.
func (q Q) TokenByClientID(ctx context.Context, clientID string) (Token, error) {
	return scanToken(q.queryRow(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE client_id = ?`, clientID))
}

// GetToken returns a live (not deleted) token of the tenant.
func (q Q) GetToken(ctx context.Context, t Tenant, id string) (Token, error) {
	return scanToken(q.queryRow(ctx, `SELECT `+tokenCols+` FROM api_tokens
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`, t.PlatformID, t.Env, id))
}

// ResetToken makes an existing token (found by client id) live again with the
// given secret hash, permissions and environment, and no expiry. It is how
// credentials supplied by environment variables are made to exist exactly.
func (q Q) ResetToken(ctx context.Context, t Token) error {
	res, err := q.exec(ctx, `UPDATE api_tokens SET secret_hash = ?, permissions = ?, env = ?, expires_at = NULL,
		deleted_at = NULL, updated_at = ? WHERE client_id = ? AND platform_id = ?`,
		t.SecretHash, strings.Join(t.Permissions, ","), t.Env, toMicros(t.UpdatedAt), t.ClientID, t.PlatformID)
	return affectedOne(res, err)
}

// DeleteToken marks a live token deleted; it stops authenticating at once.
func (q Q) DeleteToken(ctx context.Context, t Tenant, id string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE api_tokens SET deleted_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`,
		toMicros(at), toMicros(at), t.PlatformID, t.Env, id)
	return affectedOne(res, err)
}

// TokenFilter narrows ListTokens.
type TokenFilter struct {
	Name                        string
	CreatedAfter, CreatedBefore *time.Time
	UpdatedAfter, UpdatedBefore *time.Time
}

// ListTokens returns up to limit live tokens after the id `after` (keyset),
// oldest first, and how many match the filter in all.
func (q Q) ListTokens(ctx context.Context, t Tenant, f TokenFilter, after string, limit int) ([]Token, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("deleted_at IS NULL")
	if f.Name != "" {
		w.add("name = ?", f.Name)
	}
	w.timeRange("created_at", f.CreatedAfter, f.CreatedBefore)
	w.timeRange("updated_at", f.UpdatedAfter, f.UpdatedBefore)
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM api_tokens`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+tokenCols+` FROM api_tokens`+w.sql()+` ORDER BY id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		tok, err := scanToken(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, tok)
	}
	return out, total, classify(rows.Err())
}
