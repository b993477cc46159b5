package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Bulk import job statuses.
const (
	BulkPending    = "PENDING"
	BulkProcessing = "PROCESSING"
	BulkCompleted  = "COMPLETED"
	BulkFailed     = "FAILED"
)

// BulkImportJob is one bulk customer import. NextRow data rows of the file
// are done (their customers created or their errors recorded); a worker
// that takes the job over resumes after them. TotalRows is -1 until the
// file has been counted.
type BulkImportJob struct {
	ID              string
	Tenant          Tenant
	Status          string
	BlobKey         string
	FileName        string
	SizeBytes       int64
	TotalRows       int
	NextRow         int
	Succeeded       int
	AlreadyImported int
	Failed          int
	ErrorCount      int
	Attempts        int
	FailureReason   string
	LeaseOwner      *string
	LeaseUntil      *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
	StartedAt       *time.Time
	CompletedAt     *time.Time
}

// BulkImportError is one problem of one row.
type BulkImportError struct {
	JobID         string
	Seq           int
	Row           int
	CorrelationID string
	Field         string
	Code          string
	Constraint    string
	Message       string
}

const bulkJobCols = `id, platform_id, env, status, blob_key, file_name, size_bytes, total_rows, next_row, succeeded,
	already_imported, failed, error_count, attempts, failure_reason, lease_owner, lease_until, created_at, updated_at,
	started_at, completed_at`

func scanBulkJob(row interface{ Scan(...any) error }) (BulkImportJob, error) {
	var j BulkImportJob
	var owner sql.NullString
	var until, started, completed sql.NullInt64
	var created, updated int64
	if err := row.Scan(&j.ID, &j.Tenant.PlatformID, &j.Tenant.Env, &j.Status, &j.BlobKey, &j.FileName, &j.SizeBytes,
		&j.TotalRows, &j.NextRow, &j.Succeeded, &j.AlreadyImported, &j.Failed, &j.ErrorCount, &j.Attempts,
		&j.FailureReason, &owner, &until, &created, &updated, &started, &completed); err != nil {
		return BulkImportJob{}, classify(err)
	}
	j.LeaseOwner, j.LeaseUntil = custStrPtr(owner), timePtr(until)
	j.CreatedAt, j.UpdatedAt = fromMicros(created), fromMicros(updated)
	j.StartedAt, j.CompletedAt = timePtr(started), timePtr(completed)
	return j, nil
}

// InsertBulkImportJob stores a new job.
func (q Q) InsertBulkImportJob(ctx context.Context, j BulkImportJob) error {
	_, err := q.exec(ctx, `INSERT INTO bulk_import_jobs (`+bulkJobCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.Tenant.PlatformID, j.Tenant.Env, j.Status, j.BlobKey, j.FileName, j.SizeBytes, j.TotalRows, j.NextRow,
		j.Succeeded, j.AlreadyImported, j.Failed, j.ErrorCount, j.Attempts, j.FailureReason, custNullStr(j.LeaseOwner),
		nullMicros(j.LeaseUntil), toMicros(j.CreatedAt), toMicros(j.UpdatedAt), nullMicros(j.StartedAt),
		nullMicros(j.CompletedAt))
	return err
}

// GetBulkImportJob returns a job of the tenant.
func (q Q) GetBulkImportJob(ctx context.Context, t Tenant, id string) (BulkImportJob, error) {
	return scanBulkJob(q.queryRow(ctx, `SELECT `+bulkJobCols+` FROM bulk_import_jobs
		WHERE platform_id = ? AND env = ? AND id = ?`, t.PlatformID, t.Env, id))
}

// BulkImportJobByID returns a job of any tenant (the worker's read).
func (q Q) BulkImportJobByID(ctx context.Context, id string) (BulkImportJob, error) {
	return scanBulkJob(q.queryRow(ctx, `SELECT `+bulkJobCols+` FROM bulk_import_jobs WHERE id = ?`, id))
}

// ClaimableBulkImportJobs lists up to limit jobs a worker may take at `now`:
// pending ones, and processing ones whose lease has ended. Oldest first.
func (q Q) ClaimableBulkImportJobs(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := q.query(ctx, `SELECT id FROM bulk_import_jobs
		WHERE status IN ('PENDING', 'PROCESSING') AND (lease_until IS NULL OR lease_until < ?)
		ORDER BY created_at, id LIMIT ?`, toMicros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, classify(err)
		}
		out = append(out, id)
	}
	return out, classify(rows.Err())
}

// ClaimBulkImportJob leases a claimable job to owner until `until` and
// counts the attempt; ErrNotFound when another worker holds it or it has
// finished.
func (q Q) ClaimBulkImportJob(ctx context.Context, id, owner string, now, until time.Time) (BulkImportJob, error) {
	res, err := q.exec(ctx, `UPDATE bulk_import_jobs SET status = 'PROCESSING', lease_owner = ?, lease_until = ?,
		attempts = attempts + 1, started_at = COALESCE(started_at, ?), updated_at = ?
		WHERE id = ? AND status IN ('PENDING', 'PROCESSING') AND (lease_until IS NULL OR lease_until < ?)`,
		owner, toMicros(until), toMicros(now), toMicros(now), id, toMicros(now))
	if err := affectedOne(res, err); err != nil {
		return BulkImportJob{}, err
	}
	return q.BulkImportJobByID(ctx, id)
}

// SaveBulkImportProgress writes a job's counters and position, extends its
// lease to j.LeaseUntil and appends errs, provided owner still holds the
// lease (ErrNotFound otherwise: another worker took the job over). Run it in
// one transaction with nothing else, so the position and the errors of the
// rows before it commit together.
func (q Q) SaveBulkImportProgress(ctx context.Context, j BulkImportJob, owner string, errs []BulkImportError) error {
	res, err := q.exec(ctx, `UPDATE bulk_import_jobs SET total_rows = ?, next_row = ?, succeeded = ?,
		already_imported = ?, failed = ?, error_count = ?, lease_until = ?, updated_at = ?
		WHERE id = ? AND lease_owner = ? AND status = 'PROCESSING'`,
		j.TotalRows, j.NextRow, j.Succeeded, j.AlreadyImported, j.Failed, j.ErrorCount, nullMicros(j.LeaseUntil),
		toMicros(j.UpdatedAt), j.ID, owner)
	if err := affectedOne(res, err); err != nil {
		return err
	}
	for len(errs) > 0 {
		n := min(len(errs), 50)
		var b strings.Builder
		args := make([]any, 0, n*8)
		for i, e := range errs[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, j.ID, e.Seq, e.Row, e.CorrelationID, e.Field, e.Code, e.Constraint, e.Message)
		}
		if _, err := q.exec(ctx, `INSERT INTO bulk_import_errors (job_id, seq, row_number, correlation_id, field, code,
			constraint_name, message) VALUES `+b.String(), args...); err != nil {
			return err
		}
		errs = errs[n:]
	}
	return nil
}

// FinishBulkImportJob ends a job as COMPLETED or FAILED, provided owner
// still holds its lease.
func (q Q) FinishBulkImportJob(ctx context.Context, id, owner, status, reason string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE bulk_import_jobs SET status = ?, failure_reason = ?, completed_at = ?, updated_at = ?,
		lease_owner = NULL, lease_until = NULL
		WHERE id = ? AND lease_owner = ? AND status = 'PROCESSING'`,
		status, reason, toMicros(at), toMicros(at), id, owner)
	return affectedOne(res, err)
}

// ReleaseBulkImportJob gives a job's lease up until `retryAt`, for a worker
// that hit a passing failure; the job is taken again after that.
func (q Q) ReleaseBulkImportJob(ctx context.Context, id, owner string, retryAt time.Time) error {
	_, err := q.exec(ctx, `UPDATE bulk_import_jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'PROCESSING'`,
		toMicros(retryAt), id, owner)
	return err
}

// BulkImportErrors returns up to limit errors of a job in the order found.
func (q Q) BulkImportErrors(ctx context.Context, jobID string, limit int) ([]BulkImportError, error) {
	rows, err := q.query(ctx, `SELECT seq, row_number, correlation_id, field, code, constraint_name, message
		FROM bulk_import_errors WHERE job_id = ? ORDER BY seq LIMIT ?`, jobID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BulkImportError
	for rows.Next() {
		e := BulkImportError{JobID: jobID}
		if err := rows.Scan(&e.Seq, &e.Row, &e.CorrelationID, &e.Field, &e.Code, &e.Constraint, &e.Message); err != nil {
			return nil, classify(err)
		}
		out = append(out, e)
	}
	return out, classify(rows.Err())
}
