package store

import (
	"context"
	"database/sql"
	"time"
)

// SignedRequest is one row of signed_requests (package signedretry owns the
// rules).
type SignedRequest struct {
	ID          string
	Tenant      Tenant
	TokenID     string
	Method      string
	Path        string
	BodySHA256  string
	AccountID   string
	Operation   string
	Params      []byte
	Payload     string
	Status      string
	Result      string
	ExpiresAt   time.Time
	CreatedAt   time.Time
	CompletedAt *time.Time
}

const signedRequestCols = `id, platform_id, env, token_id, method, path, body_sha256, account_id, operation, params,
	payload, status, result, expires_at, created_at, completed_at`

func scanSignedRequest(row interface{ Scan(...any) error }) (SignedRequest, error) {
	var r SignedRequest
	var params string
	var expires, created int64
	var completed sql.NullInt64
	if err := row.Scan(&r.ID, &r.Tenant.PlatformID, &r.Tenant.Env, &r.TokenID, &r.Method, &r.Path, &r.BodySHA256,
		&r.AccountID, &r.Operation, &params, &r.Payload, &r.Status, &r.Result, &expires, &created, &completed); err != nil {
		return SignedRequest{}, classify(err)
	}
	r.Params = []byte(params)
	r.ExpiresAt, r.CreatedAt, r.CompletedAt = fromMicros(expires), fromMicros(created), timePtr(completed)
	return r, nil
}

// InsertSignedRequest records a signed retry's first step.
func (q Q) InsertSignedRequest(ctx context.Context, r SignedRequest) error {
	_, err := q.exec(ctx, `INSERT INTO signed_requests (`+signedRequestCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Tenant.PlatformID, r.Tenant.Env, r.TokenID, r.Method, r.Path, r.BodySHA256, r.AccountID, r.Operation,
		string(r.Params), r.Payload, r.Status, r.Result, toMicros(r.ExpiresAt), toMicros(r.CreatedAt), nullMicros(r.CompletedAt))
	return classify(err)
}

// LockSignedRequest reads a request of the tenant for update (a row lock on
// PostgreSQL; SQLite's single writer serialises), so that of concurrent
// retries exactly one completes it.
func (q Q) LockSignedRequest(ctx context.Context, t Tenant, id string) (SignedRequest, error) {
	return scanSignedRequest(q.queryRow(ctx, `SELECT `+signedRequestCols+` FROM signed_requests
		WHERE platform_id = ? AND env = ? AND id = ?`+q.forUpdate(), t.PlatformID, t.Env, id))
}

// FinishSignedRequest moves a request out of PENDING or PROCESSING, with
// the result to keep (PROCESSING) and, for COMPLETED, the time. It reports
// ErrConflict when the request was completed meanwhile.
func (q Q) FinishSignedRequest(ctx context.Context, t Tenant, id, status, result string, at time.Time) error {
	var completed sql.NullInt64
	if status == "COMPLETED" {
		completed = sql.NullInt64{Int64: toMicros(at), Valid: true}
	}
	res, err := q.exec(ctx, `UPDATE signed_requests SET status = ?, result = ?, completed_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND status <> 'COMPLETED'`,
		status, result, completed, t.PlatformID, t.Env, id)
	if err != nil {
		return classify(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return err
		}
		return ErrConflict
	}
	return nil
}

// PurgeSignedRequests deletes requests that expired before `before` and
// never completed, and completed ones finished before it, up to limit rows.
func (q Q) PurgeSignedRequests(ctx context.Context, before time.Time, limit int) (int64, error) {
	res, err := q.exec(ctx, `DELETE FROM signed_requests WHERE id IN (SELECT id FROM signed_requests
		WHERE expires_at < ? AND (status = 'PENDING' OR completed_at < ?) LIMIT ?)`,
		toMicros(before), toMicros(before), limit)
	if err != nil {
		return 0, classify(err)
	}
	return res.RowsAffected()
}
