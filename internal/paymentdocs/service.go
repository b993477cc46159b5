package paymentdocs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Validity is how long an uploaded document may be attached (R-PDOC-09).
const Validity = 24 * time.Hour

// Statuses of a document as the API shows them (R-PDOC-08).
const (
	StatusUploaded = store.PaymentDocUploaded
	StatusAttached = store.PaymentDocAttached
)

// Error codes of this capability (catalogued in apierr).
const (
	CodeNotFound         = "PAYMENT_DOCUMENT_NOT_FOUND"
	CodeAlreadyUsed      = "PAYMENT_DOCUMENT_ALREADY_USED"
	CodeExpired          = "PAYMENT_DOCUMENT_EXPIRED"
	CodeAttachmentFailed = "PAYMENT_DOCUMENT_ATTACHMENT_FAILED"
)

// SandboxAttachmentFailureMarker is the sandbox magic value: in the sandbox
// environment, attaching a document whose fileName contains it (any case)
// fails with 424 PAYMENT_DOCUMENT_ATTACHMENT_FAILED, as a payout partner
// that cannot take the file would, and the document stays UPLOADED.
// Production never simulates.
const SandboxAttachmentFailureMarker = "attachment-failed"

// SandboxAttachmentFails is the default Service.AttachmentFails.
func SandboxAttachmentFails(t store.Tenant, d Document) bool {
	return t.Env == store.EnvSandbox && strings.Contains(strings.ToLower(d.FileName), SandboxAttachmentFailureMarker)
}

// Sweeper timings (see Sweep).
const (
	// PendingTimeout is how old an unfinished upload must be before the
	// sweeper discards it (its node died between writing the row and the
	// file). Uploads are in memory and finish in well under a second.
	PendingTimeout = time.Hour
	// ExpiredFileGrace is how long after expiresAt the file of a document
	// that was never attached is kept, so clocks that disagree a little
	// never delete a file an attachment still accepts.
	ExpiredFileGrace = time.Hour
)

// Document is the PaymentDocument resource (R-PDOC-06, R-PDOC-11). The
// file's bytes are never part of it.
type Document struct {
	ID string `json:"id"`
	// CustomerID is omitted when the platform is the sender (R-PDOC-07).
	CustomerID   string `json:"customerId,omitempty"`
	DocumentType string `json:"documentType"`
	FileName     string `json:"fileName"`
	SizeBytes    int64  `json:"sizeBytes"`
	ContentType  string `json:"contentType"`
	Status       string `json:"status"`
	// QuoteID and AttachedAt are set once the document is ATTACHED.
	QuoteID    string     `json:"quoteId,omitempty"`
	AttachedAt *time.Time `json:"attachedAt,omitempty"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	CreatedAt  time.Time  `json:"createdAt"`
}

func render(r store.PaymentDocument) Document {
	d := Document{ID: r.ID, DocumentType: r.DocumentType, FileName: r.FileName, SizeBytes: r.SizeBytes,
		ContentType: r.ContentType, Status: r.Status, AttachedAt: r.AttachedAt, ExpiresAt: r.ExpiresAt,
		CreatedAt: r.CreatedAt}
	if r.CustomerID != nil {
		d.CustomerID = *r.CustomerID
	}
	if r.QuoteID != nil {
		d.QuoteID = *r.QuoteID
	}
	return d
}

// Service stores payment documents and attaches them to quotes.
type Service struct {
	DB    *store.DB
	Blobs blobstore.Store
	Log   *slog.Logger
	// AttachmentFails decides whether attaching d fails with 424
	// PAYMENT_DOCUMENT_ATTACHMENT_FAILED; nil means SandboxAttachmentFails.
	// Tests swap it to fail once and then succeed.
	AttachmentFails func(t store.Tenant, d Document) bool
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return s.Log
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }

func notFound(documentID string) error {
	return apierr.NotFound(CodeNotFound, "Payment document "+documentID)
}

// Upload stores a parsed upload for tenant and returns it UPLOADED, valid
// for Validity (R-PDOC-02, R-PDOC-08, R-PDOC-09). A customerId that names
// no live customer of the tenant is 404 CUSTOMER_NOT_FOUND and nothing is
// stored. When ctx carries an Idempotency-Key claim, the response is
// recorded with the document (its claim's Status must be set to 201).
//
// Order, so that no file is ever left without a row that accounts for it:
// the row is written PENDING first, then the file, then the row becomes
// UPLOADED. A failure in between discards both; a crash in between leaves
// a PENDING row that Sweep discards after PendingTimeout.
func (s *Service) Upload(ctx context.Context, t store.Tenant, u Upload) (Document, error) {
	now := s.now()
	sum := sha256.Sum256(u.Data)
	row := store.PaymentDocument{
		ID: id.New(id.PaymentDocument), Tenant: t, DocumentType: u.DocumentType, FileName: u.FileName,
		ContentType: u.ContentType, SizeBytes: int64(len(u.Data)), SHA256: hex.EncodeToString(sum[:]),
		Status: store.PaymentDocPending, BlobKey: blobstore.NewKey(),
		ExpiresAt: now.Add(Validity), CreatedAt: now, UpdatedAt: now,
	}
	if u.CustomerID != "" {
		c := u.CustomerID
		row.CustomerID = &c
	}
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if row.CustomerID != nil {
			if _, err := tx.GetCustomer(ctx, t, *row.CustomerID, false); errors.Is(err, store.ErrNotFound) {
				return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+*row.CustomerID)
			} else if err != nil {
				return err
			}
		}
		return tx.InsertPaymentDocument(ctx, row)
	})
	if err != nil {
		return Document{}, err
	}
	size, putSum, err := s.Blobs.Put(ctx, row.BlobKey, bytes.NewReader(u.Data))
	if err == nil && (size != row.SizeBytes || putSum != row.SHA256) {
		err = fmt.Errorf("paymentdocs: blob store kept %d bytes (sha256 %s) of %d (%s)", size, putSum, row.SizeBytes, row.SHA256)
	}
	if err != nil {
		s.discard(ctx, row)
		return Document{}, err
	}
	row.Status = store.PaymentDocUploaded
	doc := render(row)
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.PublishPaymentDocument(ctx, t, row.ID, now); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, doc)
	})
	if err != nil {
		s.discard(ctx, row)
		return Document{}, err
	}
	return doc, nil
}

// discard undoes an upload that did not finish: the row goes DISCARDED
// (only if still PENDING: a published document keeps its file), then the
// file and the row are removed. Whatever fails here Sweep finishes.
func (s *Service) discard(ctx context.Context, row store.PaymentDocument) {
	ctx = context.WithoutCancel(ctx)
	if err := s.DB.Write().DiscardPaymentDocument(ctx, row.ID, s.now()); err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log().Warn("discard payment document", "payment_document_id", row.ID, "error", err.Error())
		}
		return
	}
	s.deleteFile(ctx, store.PaymentDocumentFile{ID: row.ID, Status: store.PaymentDocDiscarded, BlobKey: row.BlobKey})
}

// deleteFile removes f's file from the blob store, then records that it is
// gone. The blob goes first: a crash in between leaves the row pointing at
// a missing file, which the next sweep deletes again harmlessly.
func (s *Service) deleteFile(ctx context.Context, f store.PaymentDocumentFile) bool {
	if err := s.Blobs.Delete(ctx, f.BlobKey); err != nil {
		s.log().Warn("delete payment document file", "payment_document_id", f.ID, "error", err.Error())
		return false
	}
	if err := s.DB.Write().ForgetPaymentDocumentFile(ctx, f, s.now()); err != nil {
		s.log().Warn("forget payment document file", "payment_document_id", f.ID, "error", err.Error())
		return false
	}
	return true
}

// Get returns a document of tenant, or 404 PAYMENT_DOCUMENT_NOT_FOUND
// (also for another platform's or environment's; R-PDOC-11, R-PDOC-12).
func (s *Service) Get(ctx context.Context, t store.Tenant, documentID string) (Document, error) {
	row, err := s.DB.Read().GetPaymentDocument(ctx, t, documentID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Document{}, notFound(documentID)
	}
	if err != nil {
		return Document{}, err
	}
	return render(row), nil
}

// Load reads documents of tenant in the order of documentIDs, inside q (a
// transaction, to lock them). Ids must be at most MaxPerQuote and distinct
// (400 INVALID_INPUT); an unknown id is 404 PAYMENT_DOCUMENT_NOT_FOUND
// (R-PDOC-29). Rows are locked in id order, so two quotes never deadlock.
func (s *Service) Load(ctx context.Context, q store.Q, t store.Tenant, documentIDs []string, lock bool) ([]Document, error) {
	var f apierr.Fields
	idListErrors(&f, documentIDs)
	if err := f.Err(); err != nil {
		return nil, err
	}
	return load(ctx, q, t, documentIDs, lock)
}

func load(ctx context.Context, q store.Q, t store.Tenant, documentIDs []string, lock bool) ([]Document, error) {
	sorted := slices.Clone(documentIDs)
	slices.Sort(sorted)
	byID := map[string]Document{}
	var missing []string
	for _, docID := range sorted {
		row, err := q.GetPaymentDocument(ctx, t, docID, lock)
		switch {
		case errors.Is(err, store.ErrNotFound):
			missing = append(missing, docID)
		case err != nil:
			return nil, err
		default:
			byID[docID] = render(row)
		}
	}
	out := make([]Document, 0, len(documentIDs))
	for _, docID := range documentIDs {
		if slices.Contains(missing, docID) {
			return nil, notFound(docID)
		}
		out = append(out, byID[docID])
	}
	return out, nil
}

// Attach attaches documents to a quote inside the quote's transaction tx
// (R-PDOC-25). Errors, in this order: more than MaxPerQuote ids or a
// repeated id, 400 INVALID_INPUT; an unknown id, 404
// PAYMENT_DOCUMENT_NOT_FOUND; a document attached to another quote, 409
// PAYMENT_DOCUMENT_ALREADY_USED (R-PDOC-27); a document whose expiresAt is
// not after now, 410 PAYMENT_DOCUMENT_EXPIRED (R-PDOC-28); a failed
// attachment, 424 PAYMENT_DOCUMENT_ATTACHMENT_FAILED (R-PDOC-30). On any
// error nothing was changed and the caller rolls tx back with its quote.
// A document already attached to quoteID is left as is, so attaching
// twice in one quote is harmless.
//
// The files are not touched here: a rollback must never lose a file. Once
// tx has committed, call ReleaseFiles to delete them at once; otherwise
// Sweep deletes them (the ATTACHED rows are the durable marker).
func (s *Service) Attach(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string, documentIDs []string, now time.Time) error {
	if quoteID == "" {
		return errors.New("paymentdocs: Attach needs a quote id")
	}
	docs, err := s.Load(ctx, tx.Q, t, documentIDs, true)
	if err != nil {
		return err
	}
	return s.attach(ctx, tx, t, quoteID, docs, now)
}

func (s *Service) attach(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string, docs []Document, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	var todo []Document
	for _, d := range docs {
		if d.Status == StatusAttached {
			if d.QuoteID == quoteID {
				continue
			}
			return apierr.Newf(CodeAlreadyUsed, "Payment document %s is already attached to another quote; a document is usable on one quote only, upload it again",
				d.ID).WithDetails(map[string]any{"paymentDocumentId": d.ID})
		}
		todo = append(todo, d)
	}
	for _, d := range todo {
		if !now.Before(d.ExpiresAt) {
			return apierr.Newf(CodeExpired, "Payment document %s expired at %s (24 hours after upload); upload it again",
				d.ID, d.ExpiresAt.Format(time.RFC3339)).WithDetails(map[string]any{"paymentDocumentId": d.ID})
		}
	}
	fails := s.AttachmentFails
	if fails == nil {
		fails = SandboxAttachmentFails
	}
	for _, d := range todo {
		if fails(t, d) {
			return apierr.Newf(CodeAttachmentFailed, "Payment document %s could not be attached to the payment; retry with the same Idempotency-Key",
				d.ID).WithDetails(map[string]any{"paymentDocumentId": d.ID})
		}
	}
	for _, d := range todo {
		if err := tx.AttachPaymentDocument(ctx, t, d.ID, quoteID, now); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("paymentdocs: %s changed while locked", d.ID)
			}
			return err
		}
	}
	return nil
}

// Payout is what AttachRequired needs to know about a quote.
type Payout struct {
	QuoteID string
	// Purpose is the quote's purposeOfPayment.
	Purpose string
	// SenderCustomerID is the customer who sends the payout; "" when the
	// platform does. A document uploaded for another customer is refused.
	SenderCustomerID string
	DocumentIDs      []string
}

// AttachRequired is the whole document step of a quote that
// RequiresDocuments, inside the quote's transaction tx: the purpose must be
// one of AllowedPurposes and the ids well formed (400 INVALID_INPUT), every
// id must exist (404), no document may belong to a customer other than the
// sender (400 INVALID_INPUT), the documents must cover the purpose's
// requirements (400 DOCUMENTS_REQUIRED with details.missingRequirements),
// and then Attach's checks and effect follow (409, 410, 424). The 400 and
// 404 answers come first: they are replayed to a retry with the same
// Idempotency-Key, while 409, 410 and 424 run again (R-IDEM-11, R-IDEM-12).
func (s *Service) AttachRequired(ctx context.Context, tx *store.Tx, t store.Tenant, p Payout, now time.Time) error {
	if p.QuoteID == "" {
		return errors.New("paymentdocs: AttachRequired needs a quote id")
	}
	var f apierr.Fields
	idListErrors(&f, p.DocumentIDs)
	var purposeErr error
	if _, ok := Requirements(p.Purpose); !ok {
		purposeErr = purposeError(p.Purpose)
	}
	if err := apierr.MergeFields(purposeErr, f.Err()); err != nil {
		return err
	}
	docs, err := load(ctx, tx.Q, t, p.DocumentIDs, true)
	if err != nil {
		return err
	}
	for i, d := range docs {
		if d.CustomerID != "" && d.CustomerID != p.SenderCustomerID {
			f.Add(fmt.Sprintf("documentIds[%d]", i), apierr.Enum, "%s was uploaded for another customer than the sender", d.ID)
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	if _, err := Check(p.Purpose, docs); err != nil {
		return err
	}
	return s.attach(ctx, tx, t, p.QuoteID, docs, now)
}

// ReleaseFiles deletes at once the files of the given documents that a
// committed transaction attached. Call it after the quote's transaction
// commits; it reads committed state only, so calling it after a rollback
// deletes nothing. Failures are logged and left to Sweep.
func (s *Service) ReleaseFiles(ctx context.Context, t store.Tenant, documentIDs []string) {
	ctx = context.WithoutCancel(ctx)
	for _, docID := range documentIDs {
		row, err := s.DB.Read().GetPaymentDocument(ctx, t, docID, false)
		if err != nil || row.Status != store.PaymentDocAttached || row.BlobKey == "" {
			continue
		}
		s.deleteFile(ctx, store.PaymentDocumentFile{ID: row.ID, Status: row.Status, BlobKey: row.BlobKey})
	}
}

// Sweep deletes every file no longer needed and reports how many went:
// the files of ATTACHED documents ("files deleted once attached"), of
// UPLOADED documents more than ExpiredFileGrace past expiresAt (they can
// never be attached), and of uploads that never finished (PENDING for
// PendingTimeout, or DISCARDED), whose rows go too. Document metadata stays
// readable with GET. Every node may run it at once: each step is
// idempotent.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	const batch, maxBatches = 100, 50
	now := s.now()
	if _, err := s.DB.Write().DiscardStalePaymentDocumentUploads(ctx, now.Add(-PendingTimeout), now); err != nil {
		return 0, err
	}
	deleted := 0
	for range maxBatches {
		files, err := s.DB.Read().PaymentDocumentFilesToDelete(ctx, now.Add(-ExpiredFileGrace), batch)
		if err != nil {
			return deleted, err
		}
		progress := 0
		for _, f := range files {
			if ctx.Err() != nil {
				return deleted, ctx.Err()
			}
			if s.deleteFile(ctx, f) {
				progress++
			}
		}
		deleted += progress
		if len(files) < batch || progress == 0 {
			break
		}
	}
	return deleted, nil
}

// DefaultMaintenanceInterval is how often RunMaintenance sweeps.
const DefaultMaintenanceInterval = time.Minute

// RunMaintenance sweeps (see Sweep) now and then every `every` (default
// DefaultMaintenanceInterval) until ctx ends. The server starts it once per
// node; several nodes may run it at once.
func (s *Service) RunMaintenance(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultMaintenanceInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log().Warn("sweep payment document files", "error", err.Error())
		case n > 0:
			s.log().Debug("deleted payment document files", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
