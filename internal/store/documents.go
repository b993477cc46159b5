package store

import (
	"context"
	"database/sql"
	"time"
)

// DocumentRecord is a verification document with the columns the KYC
// document endpoints add to customer_documents: the printed number and
// authority, and the file in the blob store (BlobKey empty when the sandbox
// recorded the document without a file).
type DocumentRecord struct {
	CustomerDocument
	DocumentNumber   string
	IssuingAuthority string
	BlobKey          string
	ContentType      string
	SizeBytes        int64
	SHA256           string
}

const documentRecordCols = customerDocumentCols + `, document_number, issuing_authority, blob_key, content_type,
	size_bytes, sha256`

func scanDocumentRecord(row interface{ Scan(...any) error }) (DocumentRecord, error) {
	var d DocumentRecord
	var issued sql.NullString
	var deleted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&d.ID, &d.Tenant.PlatformID, &d.Tenant.Env, &d.CustomerID, &d.HolderID, &d.DocumentType,
		&d.Country, &d.Side, &issued, &d.FileName, &deleted, &created, &updated,
		&d.DocumentNumber, &d.IssuingAuthority, &d.BlobKey, &d.ContentType, &d.SizeBytes, &d.SHA256); err != nil {
		return DocumentRecord{}, classify(err)
	}
	d.IssuedOn, d.DeletedAt = custStrPtr(issued), timePtr(deleted)
	d.CreatedAt, d.UpdatedAt = fromMicros(created), fromMicros(updated)
	return d, nil
}

// InsertDocumentRecord stores a document with its file. A live document of
// the same holder, type and side is ErrConflict.
func (q Q) InsertDocumentRecord(ctx context.Context, d DocumentRecord) error {
	_, err := q.exec(ctx, `INSERT INTO customer_documents (`+documentRecordCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Tenant.PlatformID, d.Tenant.Env, d.CustomerID, d.HolderID, d.DocumentType, d.Country, d.Side,
		custNullStr(d.IssuedOn), d.FileName, nullMicros(d.DeletedAt), toMicros(d.CreatedAt), toMicros(d.UpdatedAt),
		d.DocumentNumber, d.IssuingAuthority, d.BlobKey, d.ContentType, d.SizeBytes, d.SHA256)
	return err
}

// liveCustomerDoc keeps the documents of live customers only: a deleted
// customer's documents are gone from the API with it.
const liveCustomerDoc = `EXISTS (SELECT 1 FROM customers c WHERE c.id = customer_documents.customer_id AND c.deleted_at IS NULL)`

// GetDocumentRecord returns a live document of a live customer of the tenant; lock takes a row
// lock (PostgreSQL) for a read-modify-write inside a transaction.
func (q Q) GetDocumentRecord(ctx context.Context, t Tenant, id string, lock bool) (DocumentRecord, error) {
	query := `SELECT ` + documentRecordCols + ` FROM customer_documents
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL AND ` + liveCustomerDoc
	if lock {
		query += q.forUpdate()
	}
	return scanDocumentRecord(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// FindLiveDocument returns the live document of a holder with this type and
// side ("" for none), or ErrNotFound.
func (q Q) FindLiveDocument(ctx context.Context, t Tenant, holderID, documentType, side string) (DocumentRecord, error) {
	return scanDocumentRecord(q.queryRow(ctx, `SELECT `+documentRecordCols+` FROM customer_documents
		WHERE platform_id = ? AND env = ? AND holder_id = ? AND document_type = ? AND side = ? AND deleted_at IS NULL`,
		t.PlatformID, t.Env, holderID, documentType, side))
}

// ListDocumentRecords returns up to limit live documents of live customers of
// the tenant after
// the id `after` (keyset, oldest first), optionally of one holder, and how
// many match in all.
func (q Q) ListDocumentRecords(ctx context.Context, t Tenant, holderID, after string, limit int) ([]DocumentRecord, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("deleted_at IS NULL")
	w.add(liveCustomerDoc)
	if holderID != "" {
		w.add("holder_id = ?", holderID)
	}
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM customer_documents`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+documentRecordCols+` FROM customer_documents`+w.sql()+` ORDER BY id LIMIT ?`,
		append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []DocumentRecord
	for rows.Next() {
		d, err := scanDocumentRecord(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, d)
	}
	return out, total, classify(rows.Err())
}

// UpdateDocumentRecord writes every mutable column of a live document.
// Setting DeletedAt deletes it. Moving it onto the type and side of another
// live document of the holder is ErrConflict.
func (q Q) UpdateDocumentRecord(ctx context.Context, d DocumentRecord) error {
	res, err := q.exec(ctx, `UPDATE customer_documents SET document_type = ?, country = ?, side = ?, issued_on = ?,
		file_name = ?, document_number = ?, issuing_authority = ?, blob_key = ?, content_type = ?, size_bytes = ?,
		sha256 = ?, deleted_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`,
		d.DocumentType, d.Country, d.Side, custNullStr(d.IssuedOn), d.FileName, d.DocumentNumber, d.IssuingAuthority,
		d.BlobKey, d.ContentType, d.SizeBytes, d.SHA256, nullMicros(d.DeletedAt), toMicros(d.UpdatedAt),
		d.Tenant.PlatformID, d.Tenant.Env, d.ID)
	return affectedOne(res, err)
}

// TrashBlob records that no row refers to the blob key any more, so the
// sweeper removes it from the blob store even if the caller dies first.
func (q Q) TrashBlob(ctx context.Context, key string, at time.Time) error {
	if key == "" {
		return nil
	}
	_, err := q.exec(ctx, `INSERT INTO blob_trash (blob_key, created_at) VALUES (?, ?) ON CONFLICT (blob_key) DO NOTHING`,
		key, toMicros(at))
	return err
}

// TrashDeletedDocumentBlobs moves the files of deleted documents (deleted
// with their holder, for example) to the trash and reports how many.
func (q Q) TrashDeletedDocumentBlobs(ctx context.Context, at time.Time) (int, error) {
	if _, err := q.exec(ctx, `INSERT INTO blob_trash (blob_key, created_at)
		SELECT blob_key, ? FROM customer_documents WHERE deleted_at IS NOT NULL AND blob_key <> ''
		ON CONFLICT (blob_key) DO NOTHING`, toMicros(at)); err != nil {
		return 0, err
	}
	res, err := q.exec(ctx, `UPDATE customer_documents SET blob_key = '' WHERE deleted_at IS NOT NULL AND blob_key <> ''`)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// TrashedBlobs returns up to limit trashed keys, oldest first.
func (q Q) TrashedBlobs(ctx context.Context, limit int) ([]string, error) {
	rows, err := q.query(ctx, `SELECT blob_key FROM blob_trash ORDER BY created_at, blob_key LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, classify(err)
		}
		out = append(out, k)
	}
	return out, classify(rows.Err())
}

// ForgetTrashedBlob drops a key from the trash once its blob is gone.
func (q Q) ForgetTrashedBlob(ctx context.Context, key string) error {
	_, err := q.exec(ctx, `DELETE FROM blob_trash WHERE blob_key = ?`, key)
	return err
}

// DocumentBlobCounts counts document rows that point at a file and trashed
// keys: tests use it to prove a refused upload left nothing behind.
func (q Q) DocumentBlobCounts(ctx context.Context) (withFile, trashed int, err error) {
	if err = q.queryRow(ctx, `SELECT COUNT(*) FROM customer_documents WHERE blob_key <> ''`).Scan(&withFile); err != nil {
		return 0, 0, classify(err)
	}
	err = q.queryRow(ctx, `SELECT COUNT(*) FROM blob_trash`).Scan(&trashed)
	return withFile, trashed, classify(err)
}

// KycLink is a hosted KYC link. Only a hash of its token is stored.
type KycLink struct {
	ID             string
	Tenant         Tenant
	CustomerID     string
	TokenHash      string
	RedirectURI    string
	ExpiresAt      time.Time
	UsedAt         *time.Time
	VerificationID *string
	CreatedAt      time.Time
}

const kycLinkCols = `id, platform_id, env, customer_id, token_hash, redirect_uri, expires_at, used_at, verification_id, created_at`

func scanKycLink(row interface{ Scan(...any) error }) (KycLink, error) {
	var l KycLink
	var expires, created int64
	var used sql.NullInt64
	var vid sql.NullString
	if err := row.Scan(&l.ID, &l.Tenant.PlatformID, &l.Tenant.Env, &l.CustomerID, &l.TokenHash, &l.RedirectURI,
		&expires, &used, &vid, &created); err != nil {
		return KycLink{}, classify(err)
	}
	l.ExpiresAt, l.CreatedAt, l.UsedAt, l.VerificationID = fromMicros(expires), fromMicros(created), timePtr(used), custStrPtr(vid)
	return l, nil
}

// InsertKycLink stores a new link.
func (q Q) InsertKycLink(ctx context.Context, l KycLink) error {
	_, err := q.exec(ctx, `INSERT INTO kyc_links (`+kycLinkCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.Tenant.PlatformID, l.Tenant.Env, l.CustomerID, l.TokenHash, l.RedirectURI, toMicros(l.ExpiresAt),
		nullMicros(l.UsedAt), custNullStr(l.VerificationID), toMicros(l.CreatedAt))
	return err
}

// KycLinkByTokenHash finds a link by the hash of its token, in any tenant
// (the token is the credential of the public page).
func (q Q) KycLinkByTokenHash(ctx context.Context, hash string) (KycLink, error) {
	return scanKycLink(q.queryRow(ctx, `SELECT `+kycLinkCols+` FROM kyc_links WHERE token_hash = ?`, hash))
}

// ClaimKycLink marks an unused, unexpired link used at `at`; ErrNotFound
// when another request used it first or it has expired.
func (q Q) ClaimKycLink(ctx context.Context, id string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE kyc_links SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?`,
		toMicros(at), id, toMicros(at))
	return affectedOne(res, err)
}

// ReleaseKycLink makes a claimed link usable again (its submission failed
// before it changed anything).
func (q Q) ReleaseKycLink(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `UPDATE kyc_links SET used_at = NULL WHERE id = ? AND verification_id IS NULL`, id)
	return err
}

// SetKycLinkVerification records the verification a link's submission made.
func (q Q) SetKycLinkVerification(ctx context.Context, id, verificationID string) error {
	_, err := q.exec(ctx, `UPDATE kyc_links SET verification_id = ? WHERE id = ?`, verificationID, id)
	return err
}
