package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// IdemRecord is the stored state of one Idempotency-Key.
type IdemRecord struct {
	RequestHash  string
	LockToken    string
	LockedUntil  time.Time
	StatusCode   int // 0 while the first request is still in flight
	ResponseBody []byte
	CreatedAt    time.Time
}

// Done reports whether the first request's response is stored.
func (r IdemRecord) Done() bool { return r.StatusCode != 0 }

// ClaimIdempotencyKey either claims key for the caller (claimed=true: run the
// request, holding lockToken until lockedUntil) or returns the record another
// request left: finished (replay it), with another hash (refuse), or still in
// flight. A claim whose holder died (its lock expired before it completed) is
// taken over: the dead holder's effect, if it committed, also recorded the
// response in the same transaction (CompleteIdempotencyKey), so an in-flight
// record with an expired lock means the effect never happened.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, t Tenant, key, hash, lockToken string, lockedUntil time.Time) (rec IdemRecord, claimed bool, err error) {
	err = db.InTx(ctx, func(tx *Tx) error {
		rec, claimed = IdemRecord{}, false
		cur, err := tx.getIdem(ctx, t, key, true)
		switch {
		case errors.Is(err, ErrNotFound):
			now := tx.Now()
			_, err := tx.exec(ctx, `INSERT INTO idempotency_keys (platform_id, env, idem_key, request_hash, lock_token,
				locked_until, status_code, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)`,
				t.PlatformID, t.Env, key, hash, lockToken, toMicros(lockedUntil), toMicros(now))
			if err != nil {
				return err
			}
			rec = IdemRecord{RequestHash: hash, LockToken: lockToken, LockedUntil: lockedUntil, CreatedAt: now}
			claimed = true
			return nil
		case err != nil:
			return err
		}
		rec = cur
		if cur.RequestHash != hash || cur.Done() || cur.LockedUntil.After(tx.Now()) {
			return nil
		}
		if _, err := tx.exec(ctx, `UPDATE idempotency_keys SET lock_token = ?, locked_until = ?
			WHERE platform_id = ? AND env = ? AND idem_key = ? AND status_code = 0`,
			lockToken, toMicros(lockedUntil), t.PlatformID, t.Env, key); err != nil {
			return err
		}
		rec.LockToken, rec.LockedUntil, claimed = lockToken, lockedUntil, true
		return nil
	})
	if errors.Is(err, ErrConflict) {
		// Another request inserted the key between our read and insert; the
		// caller looks again.
		return IdemRecord{}, false, ErrConflict
	}
	return rec, claimed, err
}

// GetIdempotencyKey reads a key's record.
func (q Q) GetIdempotencyKey(ctx context.Context, t Tenant, key string) (IdemRecord, error) {
	return q.getIdem(ctx, t, key, false)
}

func (q Q) getIdem(ctx context.Context, t Tenant, key string, lock bool) (IdemRecord, error) {
	query := `SELECT request_hash, lock_token, locked_until, status_code, response_body, created_at
		FROM idempotency_keys WHERE platform_id = ? AND env = ? AND idem_key = ?`
	if lock {
		query += q.forUpdate()
	}
	var r IdemRecord
	var locked, created int64
	var body sql.NullString
	err := q.queryRow(ctx, query, t.PlatformID, t.Env, key).Scan(&r.RequestHash, &r.LockToken, &locked, &r.StatusCode, &body, &created)
	if err != nil {
		return IdemRecord{}, classify(err)
	}
	r.LockedUntil, r.CreatedAt = fromMicros(locked), fromMicros(created)
	if body.Valid {
		r.ResponseBody = []byte(body.String)
	}
	return r, nil
}

// CompleteIdempotencyKey stores the response for a claimed key. Called inside
// the transaction that makes the request's effect, it commits effect and
// replayable response together. ErrNotFound means the claim was lost (the lock
// expired and another request took it over): the caller must roll back.
func (q Q) CompleteIdempotencyKey(ctx context.Context, t Tenant, key, lockToken string, status int, body []byte) error {
	res, err := q.exec(ctx, `UPDATE idempotency_keys SET status_code = ?, response_body = ?
		WHERE platform_id = ? AND env = ? AND idem_key = ? AND lock_token = ? AND status_code = 0`,
		status, string(body), t.PlatformID, t.Env, key, lockToken)
	return affectedOne(res, err)
}

// InsertIdempotencyRecord stores a finished key in one statement: the
// response of a request that ran without claiming its key first (inside that
// request's effect transaction, or after it failed without effect).
// ErrConflict means the key is already taken: another request with it
// finished first, and this one must roll back its effect and replay that one.
//
// Inside a batch (InBatchTx; not a request running alone after a failed
// commit) the row is queued and goes
// in with the batch's commit, its table's rows as one statement. A key
// taken meanwhile then fails that commit, and every request of the batch
// runs again alone (batch.go), where the row is inserted at once: so the
// conflict is still this request's ErrConflict, with nothing of it
// committed.
func (q Q) InsertIdempotencyRecord(ctx context.Context, t Tenant, key, hash string, status int, body []byte) error {
	now := toMicros(q.Now())
	st := statement{sql: `INSERT INTO idempotency_keys (platform_id, env, idem_key, request_hash, lock_token,
		locked_until, status_code, response_body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		args: []any{t.PlatformID, t.Env, key, hash, "", now, status, string(body), now}} // all placeholders: mergeInserts
	if q.outbox != nil && q.outbox.shared {
		return q.queueWrite(st)
	}
	_, err := q.exec(ctx, st.sql, st.args...)
	return err
}

// ReleaseIdempotencyKey forgets an unfinished claim so that a retry with the
// same key runs the request again (used for responses that must not be
// replayed, such as 5xx and 409).
func (q Q) ReleaseIdempotencyKey(ctx context.Context, t Tenant, key, lockToken string) error {
	_, err := q.exec(ctx, `DELETE FROM idempotency_keys
		WHERE platform_id = ? AND env = ? AND idem_key = ? AND lock_token = ? AND status_code = 0`,
		t.PlatformID, t.Env, key, lockToken)
	return err
}

// PurgeIdempotencyKeys deletes finished keys created before cutoff and
// reports how many went.
func (q Q) PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < ? AND status_code <> 0`, toMicros(cutoff))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
