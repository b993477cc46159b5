package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Rail job states.
const (
	RailJobPending   = "PENDING"
	RailJobDone      = "DONE"
	RailJobCancelled = "CANCELLED"
)

// RailJob is one row of rail_jobs (see 0011_rails.sql). Data is owned by
// package rails.
type RailJob struct {
	ID            string
	Tenant        Tenant
	TransactionID string
	Kind          string
	Rail          string
	State         string
	Data          []byte
	Step          int
	Version       int
	DueAt         time.Time
	LeaseToken    string
	LeaseUntil    *time.Time
	Attempts      int
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

const railJobCols = `id, platform_id, env, transaction_id, kind, rail, state, data, step, version, due_at,
	lease_token, lease_until, attempts, last_error, created_at, updated_at`

func scanRailJob(row interface{ Scan(...any) error }) (RailJob, error) {
	var j RailJob
	var data string
	var token sql.NullString
	var due, created, updated int64
	var lease sql.NullInt64
	if err := row.Scan(&j.ID, &j.Tenant.PlatformID, &j.Tenant.Env, &j.TransactionID, &j.Kind, &j.Rail, &j.State,
		&data, &j.Step, &j.Version, &due, &token, &lease, &j.Attempts, &j.LastError, &created, &updated); err != nil {
		return RailJob{}, classify(err)
	}
	j.Data, j.LeaseToken, j.LeaseUntil = []byte(data), token.String, timePtr(lease)
	j.DueAt, j.CreatedAt, j.UpdatedAt = fromMicros(due), fromMicros(created), fromMicros(updated)
	return j, nil
}

// InsertRailJob stores a new rail job.
func (q Q) InsertRailJob(ctx context.Context, j RailJob) error {
	_, err := q.exec(ctx, `INSERT INTO rail_jobs (id, platform_id, env, transaction_id, kind, rail, state, data, step,
		version, due_at, attempts, last_error, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, '', ?, ?)`,
		j.ID, j.Tenant.PlatformID, j.Tenant.Env, j.TransactionID, j.Kind, j.Rail, j.State, string(j.Data), j.Step,
		toMicros(j.DueAt), toMicros(j.CreatedAt), toMicros(j.UpdatedAt))
	return err
}

// RailJobByTransaction returns the rail job of a transaction, locked for
// update on PostgreSQL when lock is set.
func (q Q) RailJobByTransaction(ctx context.Context, t Tenant, transactionID string, lock bool) (RailJob, error) {
	query := `SELECT ` + railJobCols + ` FROM rail_jobs WHERE platform_id = ? AND env = ? AND transaction_id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanRailJob(q.queryRow(ctx, query, t.PlatformID, t.Env, transactionID))
}

// GetRailJob returns a rail job by id.
func (q Q) GetRailJob(ctx context.Context, id string) (RailJob, error) {
	return scanRailJob(q.queryRow(ctx, `SELECT `+railJobCols+` FROM rail_jobs WHERE id = ?`, id))
}

// ErrRailJobChanged means a rail job was changed (or its lease lost) since
// it was read: the caller's step must not be applied.
var ErrRailJobChanged = errors.New("store: rail job changed since it was read")

// UpdateRailJob writes a job's new state, data, step and due time, bumps its
// version and releases its lease, but only if it is still at version
// j.Version and, when token is set, still leased to token. Otherwise it
// returns ErrRailJobChanged and the caller must roll back.
func (q Q) UpdateRailJob(ctx context.Context, j RailJob, token string) error {
	query := `UPDATE rail_jobs SET state = ?, data = ?, step = ?, due_at = ?, version = version + 1,
		lease_token = NULL, lease_until = NULL, last_error = '', updated_at = ? WHERE id = ? AND version = ?`
	args := []any{j.State, string(j.Data), j.Step, toMicros(j.DueAt), toMicros(q.now()), j.ID, j.Version}
	if token != "" {
		query += ` AND lease_token = ?`
		args = append(args, token)
	}
	err := affectedOne(q.exec(ctx, query, args...))
	if errors.Is(err, ErrNotFound) {
		return ErrRailJobChanged
	}
	return err
}

// ReleaseRailJob records a failed attempt of a leased job and makes it due
// again at retryAt, if token still holds it.
func (q Q) ReleaseRailJob(ctx context.Context, id, token, lastError string, retryAt time.Time) error {
	if len(lastError) > 1000 {
		lastError = lastError[:1000]
	}
	_, err := q.exec(ctx, `UPDATE rail_jobs SET lease_token = NULL, lease_until = NULL, last_error = ?, due_at = ?,
		updated_at = ? WHERE id = ? AND lease_token = ?`, lastError, toMicros(retryAt), toMicros(q.now()), id, token)
	return err
}

// ClaimRailJobs leases up to limit due PENDING jobs to token until
// now+lease and counts the attempt. On PostgreSQL candidates are locked FOR
// UPDATE SKIP LOCKED, and the UPDATE re-checks that the row is unleased, so
// two claimers never hold the same job.
func (db *DB) ClaimRailJobs(ctx context.Context, token string, lease time.Duration, limit int) ([]RailJob, error) {
	now := toMicros(db.now())
	var one int
	err := db.Read().queryRow(ctx, `SELECT 1 FROM rail_jobs WHERE state = 'PENDING' AND due_at <= ?
		AND (lease_until IS NULL OR lease_until < ?) LIMIT 1`, now, now).Scan(&one)
	if errors.Is(classify(err), ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	var out []RailJob
	err = db.InTx(ctx, func(tx *Tx) error {
		out = nil
		at := tx.Now()
		now := toMicros(at)
		query := `SELECT ` + railJobCols + ` FROM rail_jobs WHERE state = 'PENDING' AND due_at <= ?
			AND (lease_until IS NULL OR lease_until < ?) ORDER BY due_at, id LIMIT ?`
		if tx.engine == Postgres {
			query += ` FOR UPDATE SKIP LOCKED`
		}
		rows, err := tx.query(ctx, query, now, now, limit)
		if err != nil {
			return err
		}
		var picked []RailJob
		for rows.Next() {
			j, err := scanRailJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			picked = append(picked, j)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return classify(err)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		until := at.Add(lease)
		for _, j := range picked {
			res, err := tx.exec(ctx, `UPDATE rail_jobs SET lease_token = ?, lease_until = ?, attempts = attempts + 1
				WHERE id = ? AND state = 'PENDING' AND (lease_until IS NULL OR lease_until < ?)`,
				token, toMicros(until), j.ID, now)
			if err := affectedOne(res, err); errors.Is(err, ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			j.LeaseToken, j.LeaseUntil, j.Attempts = token, &until, j.Attempts+1
			out = append(out, j)
		}
		return nil
	})
	return out, err
}
