// Package bulkimport creates customers from an uploaded CSV file in the
// background (POST /customers/bulk/csv, GET /customers/bulk/jobs/{jobId}).
//
// The upload checks the header row at once, keeps the file in the blob store
// and creates a PENDING job. A Runner (any node, any number of them) leases
// the job, streams the file row by row with encoding/csv (memory stays
// bounded whatever the file's size), creates each row's customer through the
// customers service in its own transaction, and commits its position,
// counters and per-row errors in batches. A bad row is recorded and skipped;
// it never stops the others. A job whose worker died resumes from its last
// committed row once the lease ends.
//
// Rows are deduplicated by platformCustomerId (taken from the file, or
// derived from the row's content when the cell is empty): a row whose
// customer already exists with the same data counts as imported without
// creating anything, so re-running a file, or resuming a job, never makes a
// duplicate.
package bulkimport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Limits.
const (
	// MaxFileBytes is the largest accepted CSV file (32 MiB, about 150,000
	// typical rows).
	MaxFileBytes = 32 << 20
	// maxHeaderBytes bounds the header row.
	maxHeaderBytes = 64 << 10
	// MaxErrorsShown is how many row errors a job shows; errorCount tells
	// how many there are in all.
	MaxErrorsShown = 100
)

// CodeJobNotFound answers an unknown job id (R-CUST-25).
const CodeJobNotFound = "BULK_UPLOAD_JOB_NOT_FOUND"

// Customers is what the importer needs of the customers service.
type Customers interface {
	Create(ctx context.Context, t store.Tenant, req customers.CreateRequest) (customers.Customer, error)
	List(ctx context.Context, t store.Tenant, f store.CustomerFilter, after string, limit int) ([]customers.Customer, int, error)
}

// Job is the API representation of an import job.
type Job struct {
	ID            string     `json:"id"`
	Status        string     `json:"status"`
	FileName      string     `json:"fileName,omitempty"`
	Progress      Progress   `json:"progress"`
	Errors        []RowError `json:"errors"`
	ErrorCount    int        `json:"errorCount"`
	FailureReason string     `json:"failureReason,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
	StartedAt     *time.Time `json:"startedAt,omitempty"`
	CompletedAt   *time.Time `json:"completedAt,omitempty"`
}

// Progress counts data rows. Total is 0 until the worker has counted the
// file. Successful includes AlreadyImported: rows whose customer already
// existed with the same data, for which nothing was created.
type Progress struct {
	Total           int `json:"total"`
	Processed       int `json:"processed"`
	Successful      int `json:"successful"`
	Failed          int `json:"failed"`
	AlreadyImported int `json:"alreadyImported"`
}

// RowError is one problem of one row. Row counts the file's records with
// the header as row 1, as a spreadsheet numbers them. Field is the column
// at fault as the file names it (empty when the row as a whole is wrong).
// CorrelationID is the row's platformCustomerId, or "row N".
type RowError struct {
	Row           int    `json:"row"`
	CorrelationID string `json:"correlationId"`
	Field         string `json:"field,omitempty"`
	Code          string `json:"code"`
	Constraint    string `json:"constraint,omitempty"`
	Message       string `json:"message"`
}

func render(j store.BulkImportJob, errs []store.BulkImportError) Job {
	out := Job{ID: j.ID, Status: j.Status, FileName: j.FileName, ErrorCount: j.ErrorCount,
		FailureReason: j.FailureReason, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
		StartedAt: j.StartedAt, CompletedAt: j.CompletedAt, Errors: []RowError{},
		Progress: Progress{Total: max(j.TotalRows, 0), Processed: j.NextRow, Successful: j.Succeeded,
			Failed: j.Failed, AlreadyImported: j.AlreadyImported}}
	for _, e := range errs {
		out.Errors = append(out.Errors, RowError{Row: e.Row, CorrelationID: e.CorrelationID, Field: e.Field,
			Code: e.Code, Constraint: e.Constraint, Message: e.Message})
	}
	return out
}

// Service starts and reads import jobs.
type Service struct {
	DB    *store.DB
	Blobs blobstore.Store
	Log   *slog.Logger
}

func fileError(constraint, format string, args ...any) error {
	var f apierr.Fields
	f.Add("file", constraint, format, args...)
	return f.Err()
}

// newReader is the one CSV configuration, shared by the upload check, the
// counting pass and the import, so they see the same records.
func newReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // counted per row, so a short row is an error of its own
	cr.ReuseRecord = true
	return cr
}

// Start checks the file's header row, stores the file and creates a PENDING
// job (202). A missing, unknown or repeated column is 400 INVALID_INPUT
// naming each, and nothing is stored.
func (s *Service) Start(ctx context.Context, t store.Tenant, file io.Reader, fileName string) (Accepted, error) {
	br := bufio.NewReaderSize(file, maxHeaderBytes)
	head, err := br.Peek(maxHeaderBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return Accepted{}, fileError(apierr.Format, "could not be read: %v", err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return Accepted{}, fileError(apierr.MinLength, "is empty; the first row must name the columns")
	}
	if len(head) == maxHeaderBytes && !bytes.ContainsAny(head, "\r\n") {
		return Accepted{}, fileError(apierr.MaxLength, "has a header row longer than %d bytes", maxHeaderBytes)
	}
	rec, err := newReader(bytes.NewReader(head)).Read()
	if err != nil {
		return Accepted{}, fileError(apierr.Format, "has a header row that is not valid CSV: %v", err)
	}
	if _, err := ParseHeader(rec); err != nil {
		var he *HeaderError
		if errors.As(err, &he) {
			return Accepted{}, he.APIError()
		}
		return Accepted{}, err
	}
	key := blobstore.NewKey()
	size, _, err := s.Blobs.Put(ctx, key, blobstore.Limit(br, MaxFileBytes))
	if errors.Is(err, blobstore.ErrTooLarge) {
		return Accepted{}, fileError(apierr.MaxLength, "must be at most %d bytes", MaxFileBytes)
	}
	if err != nil {
		return Accepted{}, err
	}
	now := s.DB.Now().UTC().Truncate(time.Microsecond)
	j := store.BulkImportJob{ID: id.New(id.BulkImportJob), Tenant: t, Status: store.BulkPending, BlobKey: key,
		FileName: cleanName(fileName), SizeBytes: size, TotalRows: -1, CreatedAt: now, UpdatedAt: now}
	out := Accepted{JobID: j.ID, Job: render(j, nil)}
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertBulkImportJob(ctx, j); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		if derr := s.Blobs.Delete(context.WithoutCancel(ctx), key); derr != nil && s.Log != nil {
			s.Log.Warn("bulk import: discard file", "blob_key", key, "error", derr.Error())
		}
		return Accepted{}, err
	}
	return out, nil
}

// Accepted is the 202 answer to an upload: the job, with its id also as
// jobId.
type Accepted struct {
	JobID string `json:"jobId"`
	Job
}

// Get returns a job of the tenant with its first MaxErrorsShown errors.
func (s *Service) Get(ctx context.Context, t store.Tenant, jobID string) (Job, error) {
	q := s.DB.Read()
	j, err := q.GetBulkImportJob(ctx, t, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return Job{}, apierr.NotFound(CodeJobNotFound, "Bulk import job "+jobID)
	}
	if err != nil {
		return Job{}, err
	}
	errs, err := q.BulkImportErrors(ctx, j.ID, MaxErrorsShown)
	if err != nil {
		return Job{}, err
	}
	return render(j, errs), nil
}

// cleanName keeps the last path element of a client's file name, printable,
// at most 255 bytes. It is shown back, never used as a key or logged.
func cleanName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	for len(name) > 255 {
		name = name[:len(name)-1]
		name = strings.ToValidUTF8(name, "")
	}
	return strings.TrimSpace(name)
}

// rowLabel is the correlation id of a row without a platformCustomerId.
func rowLabel(row int) string { return fmt.Sprintf("row %d", row) }
