package bulkimport

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Runner processes import jobs. Several runners (on one node or many) may
// run at once: each job is leased to one of them at a time.
type Runner struct {
	DB        *store.DB
	Customers Customers
	Blobs     blobstore.Store
	Log       *slog.Logger

	// Owner names this runner in leases (default: random).
	Owner string
	// Lease is how long a job stays with a runner that stops reporting
	// progress (default 30s); a crashed node's jobs resume after it.
	Lease time.Duration
	// BatchRows and BatchInterval bound how much work a progress commit
	// covers (defaults 200 rows, 1s): what a crash makes the next runner
	// redo, and how stale GET /customers/bulk/jobs/{jobId} may be.
	BatchRows     int
	BatchInterval time.Duration
	// Poll is how often an idle runner looks for jobs (default 2s); Notify
	// wakes it at once.
	Poll time.Duration
	// MaxAttempts is how many times a job is taken before it fails for good
	// (default 5).
	MaxAttempts int
	// RetryDelay is how long a job waits after a passing failure (default
	// 10s).
	RetryDelay time.Duration

	wake chan struct{}
}

func (r *Runner) defaults() {
	if r.Owner == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		r.Owner = "runner-" + hex.EncodeToString(b)
	}
	if r.Lease <= 0 {
		r.Lease = 30 * time.Second
	}
	if r.BatchRows <= 0 {
		r.BatchRows = 200
	}
	if r.BatchInterval <= 0 {
		r.BatchInterval = time.Second
	}
	if r.Poll <= 0 {
		r.Poll = 2 * time.Second
	}
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 5
	}
	if r.RetryDelay <= 0 {
		r.RetryDelay = 10 * time.Second
	}
	if r.Log == nil {
		r.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
}

// NewRunner returns a runner with the defaults.
func NewRunner(db *store.DB, c Customers, blobs blobstore.Store, log *slog.Logger) *Runner {
	r := &Runner{DB: db, Customers: c, Blobs: blobs, Log: log}
	r.defaults()
	return r
}

// Notify wakes an idle Run (a job was just created on this node).
func (r *Runner) Notify() {
	r.defaults()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run processes jobs until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	r.defaults()
	t := time.NewTicker(r.Poll)
	defer t.Stop()
	for {
		if _, err := r.Drain(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("bulk import", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
	}
}

// Drain processes every job that can be taken now, one after the other, and
// reports how many it finished or advanced. Tests call it directly.
func (r *Runner) Drain(ctx context.Context) (int, error) {
	r.defaults()
	done := 0
	for ctx.Err() == nil {
		ids, err := r.DB.Read().ClaimableBulkImportJobs(ctx, r.now(), 10)
		if err != nil {
			return done, err
		}
		took := false
		for _, jobID := range ids {
			j, err := r.DB.Write().ClaimBulkImportJob(ctx, jobID, r.Owner, r.now(), r.now().Add(r.Lease))
			if errors.Is(err, store.ErrNotFound) {
				continue // another runner took it
			}
			if err != nil {
				return done, err
			}
			took = true
			if err := r.process(ctx, j); err != nil {
				if ctx.Err() != nil {
					return done, ctx.Err()
				}
				if errors.Is(err, errLostLease) {
					continue // another runner took the job over and carries on
				}
				r.Log.Warn("bulk import: job will be retried", "job_id", j.ID, "attempt", j.Attempts, "error", err.Error())
				if rerr := r.DB.Write().ReleaseBulkImportJob(ctx, j.ID, r.Owner, r.now().Add(r.RetryDelay)); rerr != nil {
					return done, rerr
				}
				continue
			}
			done++
		}
		if !took {
			return done, nil
		}
	}
	return done, ctx.Err()
}

func (r *Runner) now() time.Time { return r.DB.Now().UTC().Truncate(time.Microsecond) }

var errLostLease = errors.New("bulkimport: lease lost")

// fail ends a job as FAILED for a reason that retrying cannot fix.
func (r *Runner) fail(ctx context.Context, j store.BulkImportJob, reason string) error {
	r.Log.Warn("bulk import failed", "job_id", j.ID, "reason", reason)
	err := r.DB.Write().FinishBulkImportJob(ctx, j.ID, r.Owner, store.BulkFailed, reason, r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil // another runner took it over
	}
	return err
}

// missingFile retries a job whose file this node cannot see (the blob
// directory of several nodes must be shared; a mount may be late), and
// fails it once the attempts are used up.
func (r *Runner) missingFile(ctx context.Context, j store.BulkImportJob) error {
	if j.Attempts >= r.MaxAttempts {
		return r.fail(ctx, j, "the uploaded file is no longer available; upload it again")
	}
	return fmt.Errorf("bulkimport: job %s: file %s not found in the blob store", j.ID, j.BlobKey)
}

func (r *Runner) open(ctx context.Context, key string) (io.ReadCloser, error) {
	return r.Blobs.Get(ctx, key)
}

// count reads the whole file once and reports its data rows.
func (r *Runner) count(ctx context.Context, key string) (int, error) {
	f, err := r.open(ctx, key)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cr := newReader(bufio.NewReader(f))
	n := -1 // the header
	for {
		before := cr.InputOffset()
		_, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return max(n, 0), nil
		}
		if err != nil && cr.InputOffset() == before {
			return max(n, 0), nil // no progress: the rest is unreadable
		}
		n++
		if n%1000 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
}

// process imports a claimed job from its committed position to the end.
func (r *Runner) process(ctx context.Context, j store.BulkImportJob) error {
	if j.Attempts > r.MaxAttempts {
		return r.fail(ctx, j, fmt.Sprintf("gave up after %d attempts; the rows before row %d are imported", r.MaxAttempts, j.NextRow+2))
	}
	if j.TotalRows < 0 {
		n, err := r.count(ctx, j.BlobKey)
		if errors.Is(err, blobstore.ErrNotFound) {
			return r.missingFile(ctx, j)
		}
		if err != nil {
			return err
		}
		j.TotalRows = n
		if err := r.commit(ctx, &j, nil); err != nil {
			return err
		}
	}
	f, err := r.open(ctx, j.BlobKey)
	if errors.Is(err, blobstore.ErrNotFound) {
		return r.missingFile(ctx, j)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	cr := newReader(bufio.NewReader(f))
	rec, err := cr.Read()
	if err != nil {
		return r.fail(ctx, j, "the header row cannot be read: "+err.Error())
	}
	h, err := ParseHeader(rec)
	if err != nil {
		return r.fail(ctx, j, "the header row is invalid: "+err.Error())
	}
	// Skip the rows a previous runner committed.
	for i := 0; i < j.NextRow; i++ {
		before := cr.InputOffset()
		if _, err := cr.Read(); errors.Is(err, io.EOF) || (err != nil && cr.InputOffset() == before) {
			break
		}
	}
	var batch []store.BulkImportError
	rows := 0
	last := time.Now()
	for {
		before := cr.InputOffset()
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) || (err != nil && !errors.Is(err, io.EOF) && cr.InputOffset() == before) {
			break
		}
		rowNum := j.NextRow + 2 // the header is row 1
		var errs []store.BulkImportError
		if err != nil {
			errs = []store.BulkImportError{{Row: rowNum, CorrelationID: rowLabel(rowNum), Code: apierr.CodeInvalidInput,
				Constraint: apierr.Format, Message: "is not valid CSV: " + parseMessage(err)}}
		} else if errs, err = r.importRow(ctx, &j, h, rec, rowNum); err != nil {
			return err
		}
		if len(errs) > 0 {
			j.Failed++
			for _, e := range errs {
				e.Seq = j.ErrorCount
				j.ErrorCount++
				batch = append(batch, e)
			}
		}
		j.NextRow++
		rows++
		if rows >= r.BatchRows || time.Since(last) >= r.BatchInterval {
			if err := r.commit(ctx, &j, batch); err != nil {
				return err
			}
			batch, rows, last = nil, 0, time.Now()
		}
	}
	if j.NextRow > j.TotalRows {
		j.TotalRows = j.NextRow // the file changed under us; never report more processed than total
	}
	if err := r.commit(ctx, &j, batch); err != nil {
		return err
	}
	err = r.DB.Write().FinishBulkImportJob(ctx, j.ID, r.Owner, store.BulkCompleted, "", r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err == nil {
		r.Log.Info("bulk import completed", "job_id", j.ID, "rows", j.NextRow, "failed", j.Failed)
	}
	return err
}

// commit saves the position, counters and errors and renews the lease.
func (r *Runner) commit(ctx context.Context, j *store.BulkImportJob, errs []store.BulkImportError) error {
	now := r.now()
	until := now.Add(r.Lease)
	j.LeaseUntil, j.UpdatedAt = &until, now
	err := r.DB.InTx(ctx, func(tx *store.Tx) error {
		return tx.SaveBulkImportProgress(ctx, *j, r.Owner, errs)
	})
	if errors.Is(err, store.ErrNotFound) {
		return errLostLease
	}
	return err
}

// importRow creates one row's customer. It returns the row's errors, or an
// error when the row could not be decided (the database failed): the job is
// then retried from its last commit.
func (r *Runner) importRow(ctx context.Context, j *store.BulkImportJob, h Header, rec []string, rowNum int) ([]store.BulkImportError, error) {
	if len(rec) != h.Len() {
		return []store.BulkImportError{{Row: rowNum, CorrelationID: rowLabel(rowNum), Code: apierr.CodeInvalidInput,
			Constraint: "columns", Message: fmt.Sprintf("has %d values; the header row has %d columns", len(rec), h.Len())}}, nil
	}
	req, cellErrs := h.Request(rec)
	corr := *req.PlatformCustomerID
	if len(cellErrs) > 0 {
		var out []store.BulkImportError
		for _, ce := range cellErrs {
			out = append(out, store.BulkImportError{Row: rowNum, CorrelationID: corr, Field: h.Written(ce.field),
				Code: apierr.CodeInvalidInput, Constraint: ce.constraint, Message: ce.message})
		}
		return out, nil
	}
	_, err := r.Customers.Create(ctx, j.Tenant, req)
	if err == nil {
		j.Succeeded++
		return nil, nil
	}
	ae, ok := apierr.From(err)
	if !ok {
		return nil, err
	}
	if ae.Code == apierr.CodeConflict {
		if _, taken := ae.Details["platformCustomerId"]; taken {
			list, _, lerr := r.Customers.List(ctx, j.Tenant, store.CustomerFilter{PlatformCustomerID: corr}, "", 1)
			if lerr != nil {
				return nil, lerr
			}
			if len(list) == 1 && h.Matches(req, list[0]) {
				j.Succeeded++
				j.AlreadyImported++
				return nil, nil
			}
			existing := "another customer"
			if len(list) == 1 {
				existing = list[0].ID
			}
			return []store.BulkImportError{{Row: rowNum, CorrelationID: corr, Field: h.Written(ColumnPlatformCustomerID),
				Code: ae.Code, Message: fmt.Sprintf("%q already belongs to %s, whose data differs from this row", corr, existing)}}, nil
		}
	}
	if fields := apierr.FieldList(err); len(fields) > 0 {
		out := make([]store.BulkImportError, 0, len(fields))
		for _, fe := range fields {
			out = append(out, store.BulkImportError{Row: rowNum, CorrelationID: corr, Field: h.Written(fe.Field),
				Code: ae.Code, Constraint: fe.Constraint, Message: fe.Message})
		}
		return out, nil
	}
	if ae.Status >= 500 {
		return nil, err
	}
	return []store.BulkImportError{{Row: rowNum, CorrelationID: corr, Code: ae.Code, Message: ae.Reason}}, nil
}

// parseMessage is a csv error without its "record on line N" prefix.
func parseMessage(err error) string {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) {
		if inner := pe.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

var _ Customers = (*customers.Service)(nil)
