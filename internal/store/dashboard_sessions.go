package store

import (
	"context"
	"time"
)

// DashboardSession is a signed-in dashboard session. IDHash is the SHA-256
// (hex) of the cookie's value; the value itself is never stored.
type DashboardSession struct {
	IDHash     string
	Tenant     Tenant
	TokenID    string
	CSRFToken  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

const dashboardSessionCols = `id_hash, platform_id, env, token_id, csrf_token, created_at, last_seen_at, expires_at`

// InsertDashboardSession stores a new session.
func (q Q) InsertDashboardSession(ctx context.Context, s DashboardSession) error {
	_, err := q.exec(ctx, `INSERT INTO dashboard_sessions (`+dashboardSessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.IDHash, s.Tenant.PlatformID, s.Tenant.Env, s.TokenID, s.CSRFToken,
		toMicros(s.CreatedAt), toMicros(s.LastSeenAt), toMicros(s.ExpiresAt))
	return err
}

// DashboardSessionByHash returns the session whose id hashes to idHash, if it
// has not expired at now (ErrNotFound otherwise).
func (q Q) DashboardSessionByHash(ctx context.Context, idHash string, now time.Time) (DashboardSession, error) {
	var s DashboardSession
	var created, seen, expires int64
	err := q.queryRow(ctx, `SELECT `+dashboardSessionCols+` FROM dashboard_sessions WHERE id_hash = ? AND expires_at > ?`,
		idHash, toMicros(now)).Scan(&s.IDHash, &s.Tenant.PlatformID, &s.Tenant.Env, &s.TokenID, &s.CSRFToken,
		&created, &seen, &expires)
	if err != nil {
		return DashboardSession{}, classify(err)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	return s, nil
}

// TouchDashboardSession records activity: last seen at now, expiring at
// expires (the idle timeout from now, never past the absolute limit).
func (q Q) TouchDashboardSession(ctx context.Context, idHash string, now, expires time.Time) error {
	_, err := q.exec(ctx, `UPDATE dashboard_sessions SET last_seen_at = ?, expires_at = ? WHERE id_hash = ?`,
		toMicros(now), toMicros(expires), idHash)
	return err
}

// DeleteDashboardSession ends a session (sign-out); ending one already gone
// is not an error.
func (q Q) DeleteDashboardSession(ctx context.Context, idHash string) error {
	_, err := q.exec(ctx, `DELETE FROM dashboard_sessions WHERE id_hash = ?`, idHash)
	return err
}

// DeleteExpiredDashboardSessions removes sessions expired before now and
// reports how many.
func (q Q) DeleteExpiredDashboardSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := q.exec(ctx, `DELETE FROM dashboard_sessions WHERE expires_at <= ?`, toMicros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
