package store

import (
	"context"
	"database/sql"
	"time"
)

// Statuses of a payment_documents row. UPLOADED and ATTACHED are the API's;
// PENDING (file being written) and DISCARDED (unfinished upload, to be
// removed) never leave the store.
const (
	PaymentDocPending   = "PENDING"
	PaymentDocUploaded  = "UPLOADED"
	PaymentDocAttached  = "ATTACHED"
	PaymentDocDiscarded = "DISCARDED"
)

// PaymentDocument is one row of payment_documents. CustomerID is nil when
// the platform is the sender. BlobKey is "" once the file is deleted.
type PaymentDocument struct {
	ID           string
	Tenant       Tenant
	CustomerID   *string
	DocumentType string
	FileName     string
	ContentType  string
	SizeBytes    int64
	SHA256       string
	Status       string
	BlobKey      string
	QuoteID      *string
	AttachedAt   *time.Time
	ExpiresAt    time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const paymentDocumentCols = `id, platform_id, env, customer_id, document_type, file_name, content_type, size_bytes,
	sha256, status, blob_key, quote_id, attached_at, expires_at, created_at, updated_at`

func scanPaymentDocument(row interface{ Scan(...any) error }) (PaymentDocument, error) {
	var d PaymentDocument
	var customer, quote sql.NullString
	var attached sql.NullInt64
	var expires, created, updated int64
	if err := row.Scan(&d.ID, &d.Tenant.PlatformID, &d.Tenant.Env, &customer, &d.DocumentType, &d.FileName,
		&d.ContentType, &d.SizeBytes, &d.SHA256, &d.Status, &d.BlobKey, &quote, &attached,
		&expires, &created, &updated); err != nil {
		return PaymentDocument{}, classify(err)
	}
	d.CustomerID, d.QuoteID, d.AttachedAt = custStrPtr(customer), custStrPtr(quote), timePtr(attached)
	d.ExpiresAt, d.CreatedAt, d.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	return d, nil
}

// InsertPaymentDocument stores a new row (normally PENDING, before its file
// is written).
func (q Q) InsertPaymentDocument(ctx context.Context, d PaymentDocument) error {
	_, err := q.exec(ctx, `INSERT INTO payment_documents (`+paymentDocumentCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Tenant.PlatformID, d.Tenant.Env, custNullStr(d.CustomerID), d.DocumentType, d.FileName,
		d.ContentType, d.SizeBytes, d.SHA256, d.Status, d.BlobKey, custNullStr(d.QuoteID), nullMicros(d.AttachedAt),
		toMicros(d.ExpiresAt), toMicros(d.CreatedAt), toMicros(d.UpdatedAt))
	return err
}

// GetPaymentDocument returns a document of the tenant that the API may show
// (UPLOADED or ATTACHED); lock takes a row lock (PostgreSQL) for a
// read-modify-write inside a transaction.
func (q Q) GetPaymentDocument(ctx context.Context, t Tenant, id string, lock bool) (PaymentDocument, error) {
	query := `SELECT ` + paymentDocumentCols + ` FROM payment_documents
		WHERE platform_id = ? AND env = ? AND id = ? AND status IN ('UPLOADED', 'ATTACHED')`
	if lock {
		query += q.forUpdate()
	}
	return scanPaymentDocument(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// PublishPaymentDocument makes a PENDING document UPLOADED once its file is
// written; ErrNotFound when it is no longer PENDING (the sweeper discarded
// it).
func (q Q) PublishPaymentDocument(ctx context.Context, t Tenant, id string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE payment_documents SET status = 'UPLOADED', updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND status = 'PENDING'`,
		toMicros(at), t.PlatformID, t.Env, id)
	return affectedOne(res, err)
}

// DiscardPaymentDocument marks a PENDING document DISCARDED: its upload did
// not finish, and its file and then the row are to be removed. ErrNotFound
// when it is not PENDING (it was published after all): its file must stay.
func (q Q) DiscardPaymentDocument(ctx context.Context, id string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE payment_documents SET status = 'DISCARDED', updated_at = ?
		WHERE id = ? AND status = 'PENDING'`, toMicros(at), id)
	return affectedOne(res, err)
}

// AttachPaymentDocument marks an UPLOADED document ATTACHED to quoteID;
// ErrNotFound when it is not UPLOADED.
func (q Q) AttachPaymentDocument(ctx context.Context, t Tenant, id, quoteID string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE payment_documents SET status = 'ATTACHED', quote_id = ?, attached_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND status = 'UPLOADED'`,
		quoteID, toMicros(at), toMicros(at), t.PlatformID, t.Env, id)
	return affectedOne(res, err)
}

// DiscardStalePaymentDocumentUploads marks DISCARDED the PENDING rows
// created before `before` (their node died mid-upload) and reports how many.
func (q Q) DiscardStalePaymentDocumentUploads(ctx context.Context, before, at time.Time) (int, error) {
	res, err := q.exec(ctx, `UPDATE payment_documents SET status = 'DISCARDED', updated_at = ?
		WHERE status = 'PENDING' AND created_at < ?`, toMicros(at), toMicros(before))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PaymentDocumentFile is a file the sweeper may delete.
type PaymentDocumentFile struct {
	ID      string
	Status  string
	BlobKey string
}

// PaymentDocumentFilesToDelete returns up to limit rows whose file is no
// longer needed: ATTACHED and DISCARDED rows that still hold one, and
// UPLOADED rows that expired before expiredBefore.
func (q Q) PaymentDocumentFilesToDelete(ctx context.Context, expiredBefore time.Time, limit int) ([]PaymentDocumentFile, error) {
	rows, err := q.query(ctx, `SELECT id, status, blob_key FROM payment_documents
		WHERE blob_key <> '' AND (status IN ('ATTACHED', 'DISCARDED') OR (status = 'UPLOADED' AND expires_at < ?))
		ORDER BY id LIMIT ?`, toMicros(expiredBefore), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PaymentDocumentFile
	for rows.Next() {
		var f PaymentDocumentFile
		if err := rows.Scan(&f.ID, &f.Status, &f.BlobKey); err != nil {
			return nil, classify(err)
		}
		out = append(out, f)
	}
	return out, classify(rows.Err())
}

// ForgetPaymentDocumentFile records that f's file is gone from the blob
// store: a DISCARDED row is deleted, any other keeps its metadata with an
// empty blob_key.
func (q Q) ForgetPaymentDocumentFile(ctx context.Context, f PaymentDocumentFile, at time.Time) error {
	if f.Status == PaymentDocDiscarded {
		_, err := q.exec(ctx, `DELETE FROM payment_documents WHERE id = ? AND status = 'DISCARDED'`, f.ID)
		return err
	}
	_, err := q.exec(ctx, `UPDATE payment_documents SET blob_key = '', updated_at = ?
		WHERE id = ? AND blob_key = ? AND status IN ('UPLOADED', 'ATTACHED')`, toMicros(at), f.ID, f.BlobKey)
	return err
}

// PaymentDocumentCounts counts every payment_documents row and those that
// still hold a file: tests use it to prove a refused upload left nothing.
func (q Q) PaymentDocumentCounts(ctx context.Context) (rows, withFile int, err error) {
	err = q.queryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN blob_key <> '' THEN 1 ELSE 0 END), 0)
		FROM payment_documents`).Scan(&rows, &withFile)
	return rows, withFile, classify(err)
}
