package customers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/paymentsd/paymentsd/internal/docformat"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Limits of an uploaded verification document's file: 1 to
// MaxDocumentBytes bytes of PDF, JPEG or PNG, the format detected from the
// first bytes of the contents (never from the name or the declared type).
const MaxDocumentBytes = 10_000_000

// Detected content types.
const (
	ContentTypePDF  = docformat.PDF
	ContentTypeJPEG = docformat.JPEG
	ContentTypePNG  = docformat.PNG
)

// CodeDocumentAlreadyExists answers a second document of the same holder,
// type and side (R-ERR-18): replace the first with PUT.
const CodeDocumentAlreadyExists = "DOCUMENT_ALREADY_EXISTS"

// DetectContentType names the format of a file from its first bytes
// (docformat.Detect).
func DetectContentType(head []byte) string { return docformat.Detect(head) }

// StoredFile is a file written to the blob store and not yet attached to a
// document; Discard removes it if it never is.
type StoredFile struct {
	Key         string
	FileName    string
	ContentType string
	SizeBytes   int64
	SHA256      string
}

// upload is what an upload adds to a DocumentRequest; RecordDocument stores
// it with the row.
type upload struct {
	file             StoredFile
	documentNumber   string
	issuingAuthority string
}

// KYCDocument is the API representation of a verification document with
// its file's metadata. The file's bytes are never part of it.
type KYCDocument struct {
	ID               string    `json:"id"`
	DocumentHolder   string    `json:"documentHolder"`
	DocumentType     string    `json:"documentType"`
	Side             string    `json:"side,omitempty"`
	Country          string    `json:"country,omitempty"`
	DocumentNumber   string    `json:"documentNumber,omitempty"`
	IssuingAuthority string    `json:"issuingAuthority,omitempty"`
	IssuedOn         *string   `json:"issuedOn,omitempty"`
	FileName         string    `json:"fileName,omitempty"`
	ContentType      string    `json:"contentType,omitempty"`
	SizeBytes        int64     `json:"sizeBytes,omitempty"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

func renderKYCDocument(d store.DocumentRecord) KYCDocument {
	return KYCDocument{ID: d.ID, DocumentHolder: d.HolderID, DocumentType: d.DocumentType, Side: d.Side,
		Country: d.Country, DocumentNumber: d.DocumentNumber, IssuingAuthority: d.IssuingAuthority,
		IssuedOn: d.IssuedOn, FileName: d.FileName, ContentType: d.ContentType, SizeBytes: d.SizeBytes,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// UploadRequest is the metadata of POST /documents (multipart fields beside
// the file).
type UploadRequest struct {
	DocumentRequest
	DocumentNumber   *string
	IssuingAuthority *string
}

// Validate lists every invalid field; it never changes r. An upload needs
// the issuing country, which the sandbox recording does not.
func (r UploadRequest) Validate(now time.Time) error {
	x := &v{}
	x.required("country", r.Country)
	x.text("documentNumber", r.DocumentNumber, 64)
	x.text("issuingAuthority", r.IssuingAuthority, MaxTextLength)
	return apierr.MergeFields(r.DocumentRequest.Validate(now), x.f.Err())
}

// ReplaceRequest is the metadata of PUT /documents/{documentId}: the fields
// to change beside the new file; omitted fields keep their value.
type ReplaceRequest struct {
	DocumentType     *string
	Country          *string
	Side             *string
	IssuedOn         *string
	DocumentNumber   *string
	IssuingAuthority *string
}

// Validate lists every invalid field; it never changes r.
func (r ReplaceRequest) Validate(now time.Time) error {
	x := &v{}
	x.enum("documentType", r.DocumentType, DocumentTypes)
	x.country("country", r.Country)
	x.enum("side", r.Side, DocumentSides)
	x.date("issuedOn", r.IssuedOn, now)
	x.text("documentNumber", r.DocumentNumber, 64)
	x.text("issuingAuthority", r.IssuingAuthority, MaxTextLength)
	return x.f.Err()
}

// Documents manages verification documents with their files: the file goes
// to the blob store, the metadata through Service.RecordDocument, so a
// verification reads uploads exactly as it reads sandbox recordings.
type Documents struct {
	Svc   *Service
	Blobs blobstore.Store
}

func (d *Documents) log() *slog.Logger { return d.Svc.Log }

func fileError(constraint, format string, args ...any) error {
	var f apierr.Fields
	f.Add("file", constraint, format, args...)
	return f.Err()
}

// StoreFile writes r to the blob store after checking its format, and
// refuses it (400 INVALID_INPUT on field `file`, nothing stored) when it is
// empty, larger than MaxDocumentBytes, or not a PDF, JPEG or PNG. name is
// the client's file name: kept as metadata only, never as a key or in logs.
func (d *Documents) StoreFile(ctx context.Context, r io.Reader, name string) (StoredFile, error) {
	br := bufio.NewReaderSize(r, 512)
	head, err := br.Peek(docformat.HeadLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return StoredFile{}, fileError(apierr.Format, "could not be read: %v", err)
	}
	if len(head) == 0 {
		return StoredFile{}, fileError(apierr.MinLength, "is empty; upload a PDF, JPEG or PNG file of 1 to %d bytes", MaxDocumentBytes)
	}
	ct := DetectContentType(head)
	if ct == "" {
		return StoredFile{}, fileError(apierr.Format, "must be a PDF, JPEG or PNG file; its contents are none of these (the format is detected from the contents, not the name)")
	}
	key := blobstore.NewKey()
	size, sum, err := d.Blobs.Put(ctx, key, blobstore.Limit(br, MaxDocumentBytes))
	switch {
	case errors.Is(err, blobstore.ErrTooLarge):
		return StoredFile{}, fileError(apierr.MaxLength, "must be at most %d bytes", MaxDocumentBytes)
	case err != nil:
		return StoredFile{}, err
	}
	return StoredFile{Key: key, FileName: docformat.CleanFileName(name, ct, MaxTextLength), ContentType: ct, SizeBytes: size, SHA256: sum}, nil
}

// Discard removes a stored file that no document refers to.
func (d *Documents) Discard(ctx context.Context, f StoredFile) {
	if f.Key == "" {
		return
	}
	if err := d.Blobs.Delete(context.WithoutCancel(ctx), f.Key); err != nil {
		d.log().Warn("discard document file", "blob_key", f.Key, "error", err.Error())
	}
}

func documentExists(existing store.DocumentRecord) error {
	side := ""
	if existing.Side != "" {
		side = " (" + existing.Side + ")"
	}
	return apierr.Newf(CodeDocumentAlreadyExists, "%s already has a %s document%s: %s; replace it with PUT /documents/%s",
		existing.HolderID, existing.DocumentType, side, existing.ID, existing.ID).
		WithDetails(map[string]any{"documentId": existing.ID})
}

func documentNotFound(documentID string) error {
	return apierr.NotFound(apierr.CodeNotFound, "Document "+documentID)
}

// insertDocument stores a new document for RecordDocument, inside its
// transaction: one live document per holder, type and side (R-ERR-18).
func (s *Service) insertDocument(ctx context.Context, tx *store.Tx, d store.CustomerDocument, req DocumentRequest) error {
	existing, err := tx.FindLiveDocument(ctx, d.Tenant, d.HolderID, d.DocumentType, d.Side)
	if err == nil {
		return documentExists(existing)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	rec := store.DocumentRecord{CustomerDocument: d}
	if u := req.upload; u != nil {
		rec.DocumentNumber, rec.IssuingAuthority = u.documentNumber, u.issuingAuthority
		rec.BlobKey, rec.ContentType, rec.SizeBytes, rec.SHA256 = u.file.Key, u.file.ContentType, u.file.SizeBytes, u.file.SHA256
	}
	err = tx.InsertDocumentRecord(ctx, rec)
	if errors.Is(err, store.ErrConflict) {
		// A concurrent upload of the same kind won.
		return apierr.Newf(CodeDocumentAlreadyExists, "%s already has a %s document; replace it with PUT /documents/{documentId}",
			d.HolderID, d.DocumentType)
	}
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DocumentRejections are the codes a provider refuses a document with
// (R-ERR-10). In sandbox, a document whose documentNumber is one of them is
// refused with that code, so a platform can rehearse its handling.
var DocumentRejections = []string{"LOW_QUALITY", "DATA_MISMATCH", "EXPIRED", "SUSPECTED_FRAUD", "UNSUITABLE_DOCUMENT", "INCOMPLETE"}

// DocumentRejection is the sandbox's refusal of a document with this
// number, if any (nil in production).
func DocumentRejection(t store.Tenant, documentNumber *string) error {
	if t.Env != store.EnvSandbox || documentNumber == nil || !slices.Contains(DocumentRejections, *documentNumber) {
		return nil
	}
	return apierr.Newf(*documentNumber, "The document was refused: %s (sandbox: its documentNumber asks for this outcome); upload another",
		strings.ToLower(strings.ReplaceAll(*documentNumber, "_", " ")))
}

// Upload records a document with its stored file (POST /documents). On any
// failure the file is discarded, so a refused upload leaves nothing behind.
func (d *Documents) Upload(ctx context.Context, t store.Tenant, req UploadRequest, f StoredFile) (KYCDocument, error) {
	err := req.Validate(d.Svc.now())
	if err == nil {
		err = DocumentRejection(t, req.DocumentNumber)
	}
	if err != nil {
		d.Discard(ctx, f)
		return KYCDocument{}, err
	}
	dr := req.DocumentRequest
	if dr.FileName == nil {
		name := f.FileName
		dr.FileName = &name
	}
	dr.upload = &upload{file: f, documentNumber: deref(req.DocumentNumber), issuingAuthority: deref(req.IssuingAuthority)}
	doc, err := d.Svc.RecordDocument(ctx, t, dr)
	if err != nil {
		d.Discard(ctx, f)
		return KYCDocument{}, err
	}
	return KYCDocument{ID: doc.ID, DocumentHolder: doc.DocumentHolder, DocumentType: doc.DocumentType, Side: doc.Side,
		Country: doc.Country, DocumentNumber: dr.upload.documentNumber, IssuingAuthority: dr.upload.issuingAuthority,
		IssuedOn: doc.IssuedOn, FileName: doc.FileName, ContentType: f.ContentType, SizeBytes: f.SizeBytes,
		CreatedAt: doc.CreatedAt, UpdatedAt: doc.CreatedAt}, nil
}

// reviewLocked refuses to change a document while a manual review of its
// customer is in progress: the reviewer is looking at it.
func reviewLocked(ctx context.Context, tx *store.Tx, t store.Tenant, doc store.DocumentRecord) error {
	row, err := tx.GetCustomer(ctx, t, doc.CustomerID, true)
	if errors.Is(err, store.ErrNotFound) {
		return documentNotFound(doc.ID) // its customer was deleted
	}
	if err != nil {
		return err
	}
	if row.Status == StatusPending && row.ReviewVerificationID != nil {
		return apierr.Conflict(fmt.Sprintf("Document %s is part of verification %s, whose manual review is in progress; "+
			"it can be changed once the review ends", doc.ID, *row.ReviewVerificationID))
	}
	return nil
}

// Replace puts a new file (and optionally new metadata) in place of a
// document's (PUT /documents/{documentId}). The old file is removed once the
// change commits. On any failure the new file is discarded.
func (d *Documents) Replace(ctx context.Context, t store.Tenant, documentID string, req ReplaceRequest, f StoredFile) (KYCDocument, error) {
	s := d.Svc
	now := s.now()
	err := req.Validate(now)
	if err == nil {
		err = DocumentRejection(t, req.DocumentNumber)
	}
	if err != nil {
		d.Discard(ctx, f)
		return KYCDocument{}, err
	}
	var out store.DocumentRecord
	var old string
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		doc, err := tx.GetDocumentRecord(ctx, t, documentID, false)
		if errors.Is(err, store.ErrNotFound) {
			return documentNotFound(documentID)
		}
		if err != nil {
			return err
		}
		if err := reviewLocked(ctx, tx, t, doc); err != nil {
			return err
		}
		if doc, err = tx.GetDocumentRecord(ctx, t, documentID, true); errors.Is(err, store.ErrNotFound) {
			return documentNotFound(documentID)
		} else if err != nil {
			return err
		}
		if req.DocumentType != nil {
			doc.DocumentType = *req.DocumentType
		}
		if req.Side != nil {
			doc.Side = *req.Side
		}
		if other, err := tx.FindLiveDocument(ctx, t, doc.HolderID, doc.DocumentType, doc.Side); err == nil && other.ID != doc.ID {
			return documentExists(other)
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if req.Country != nil {
			doc.Country = *req.Country
		}
		if req.IssuedOn != nil {
			doc.IssuedOn = req.IssuedOn
		}
		if req.DocumentNumber != nil {
			doc.DocumentNumber = *req.DocumentNumber
		}
		if req.IssuingAuthority != nil {
			doc.IssuingAuthority = *req.IssuingAuthority
		}
		old = doc.BlobKey
		doc.FileName, doc.BlobKey, doc.ContentType, doc.SizeBytes, doc.SHA256 = f.FileName, f.Key, f.ContentType, f.SizeBytes, f.SHA256
		doc.UpdatedAt = now
		if err := tx.TrashBlob(ctx, old, now); err != nil {
			return err
		}
		if err := tx.UpdateDocumentRecord(ctx, doc); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return apierr.Newf(CodeDocumentAlreadyExists, "%s already has a %s document", doc.HolderID, doc.DocumentType)
			}
			return err
		}
		out = doc
		return nil
	})
	if err != nil {
		d.Discard(ctx, f)
		return KYCDocument{}, err
	}
	d.removeTrashed(ctx, old)
	return renderKYCDocument(out), nil
}

// Delete removes a document and its file (DELETE /documents/{documentId}).
// The next submission no longer sees it.
func (d *Documents) Delete(ctx context.Context, t store.Tenant, documentID string) error {
	s := d.Svc
	var old string
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		doc, err := tx.GetDocumentRecord(ctx, t, documentID, false)
		if errors.Is(err, store.ErrNotFound) {
			return documentNotFound(documentID)
		}
		if err != nil {
			return err
		}
		if err := reviewLocked(ctx, tx, t, doc); err != nil {
			return err
		}
		if doc, err = tx.GetDocumentRecord(ctx, t, documentID, true); errors.Is(err, store.ErrNotFound) {
			return documentNotFound(documentID)
		} else if err != nil {
			return err
		}
		now := s.now()
		old = doc.BlobKey
		doc.BlobKey, doc.DeletedAt, doc.UpdatedAt = "", &now, now
		if err := tx.TrashBlob(ctx, old, now); err != nil {
			return err
		}
		return tx.UpdateDocumentRecord(ctx, doc)
	})
	if err != nil {
		return err
	}
	d.removeTrashed(ctx, old)
	return nil
}

// Get returns a live document's metadata.
func (d *Documents) Get(ctx context.Context, t store.Tenant, documentID string) (KYCDocument, error) {
	doc, err := d.Svc.DB.Read().GetDocumentRecord(ctx, t, documentID, false)
	if errors.Is(err, store.ErrNotFound) {
		return KYCDocument{}, documentNotFound(documentID)
	}
	if err != nil {
		return KYCDocument{}, err
	}
	return renderKYCDocument(doc), nil
}

// List returns one page of live documents, oldest first, optionally of one
// holder.
func (d *Documents) List(ctx context.Context, t store.Tenant, holderID, after string, limit int) ([]KYCDocument, int, error) {
	rows, total, err := d.Svc.DB.Read().ListDocumentRecords(ctx, t, holderID, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]KYCDocument, len(rows))
	for i, r := range rows {
		out[i] = renderKYCDocument(r)
	}
	return out, total, nil
}

// removeTrashed deletes a trashed blob now; if that fails the sweeper
// retries later.
func (d *Documents) removeTrashed(ctx context.Context, key string) {
	if key == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := d.Blobs.Delete(ctx, key); err != nil {
		d.log().Warn("delete replaced document file; the sweeper will retry", "blob_key", key, "error", err.Error())
		return
	}
	if err := d.Svc.DB.Write().ForgetTrashedBlob(ctx, key); err != nil {
		d.log().Warn("forget trashed blob", "blob_key", key, "error", err.Error())
	}
}

// Sweep removes files no document refers to any more: those of documents
// deleted with their holder, and trashed files whose removal did not happen
// (a crash, a blob store error). It reports how many files it removed.
func (d *Documents) Sweep(ctx context.Context) (int, error) {
	db := d.Svc.DB
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.TrashDeletedDocumentBlobs(ctx, d.Svc.now())
		return err
	}); err != nil {
		return 0, err
	}
	removed := 0
	for {
		keys, err := db.Read().TrashedBlobs(ctx, 100)
		if err != nil || len(keys) == 0 {
			return removed, err
		}
		for _, k := range keys {
			if err := d.Blobs.Delete(ctx, k); err != nil {
				return removed, err
			}
			if err := db.Write().ForgetTrashedBlob(ctx, k); err != nil {
				return removed, err
			}
			removed++
		}
	}
}

// Find returns the live document of a holder with this type and side (""
// for none), if there is one.
func (d *Documents) Find(ctx context.Context, t store.Tenant, holderID, documentType, side string) (KYCDocument, bool, error) {
	doc, err := d.Svc.DB.Read().FindLiveDocument(ctx, t, holderID, documentType, side)
	if errors.Is(err, store.ErrNotFound) {
		return KYCDocument{}, false, nil
	}
	if err != nil {
		return KYCDocument{}, false, err
	}
	return renderKYCDocument(doc), true, nil
}
