package paymentdocs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

var ctx = context.Background()

// clock is a settable store clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

type fixture struct {
	db       *store.DB
	svc      *Service
	dir      string
	clock    *clock
	sandbox  store.Tenant
	prod     store.Tenant
	customer string // a customer of sandbox
}

var t0 = time.Date(2025, 10, 13, 9, 0, 0, 0, time.UTC)

func newFixture(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	c := &clock{t: t0}
	db.SetClock(c.now)
	dir := t.TempDir()
	fs, err := blobstore.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, svc: &Service{DB: db, Blobs: fs}, dir: dir, clock: c}
	p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: t0}
	f.sandbox = store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	f.prod = store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
	f.customer = id.New(id.Customer)
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertPlatform(ctx, p); err != nil {
			return err
		}
		return tx.InsertCustomer(ctx, store.Customer{ID: f.customer, Tenant: f.sandbox, PlatformCustomerID: "pc-1",
			Type: "BUSINESS", Status: "APPROVED", Profile: []byte(`{}`), CreatedAt: t0, UpdatedAt: t0})
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) upload(t *testing.T, tn store.Tenant, typ, name string) Document {
	t.Helper()
	d, err := f.svc.Upload(ctx, tn, Upload{DocumentType: typ, FileName: name, ContentType: ContentTypePDF, Data: pdfBytes})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// files counts the blobs stored (temporary files excluded).
func (f *fixture) files(t *testing.T) int {
	t.Helper()
	n := 0
	err := filepath.Walk(f.dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && info.Name() == "tmp" {
			return filepath.SkipDir
		}
		if !info.IsDir() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) rows(t *testing.T) (rows, withFile int) {
	t.Helper()
	rows, withFile, err := f.db.Read().PaymentDocumentCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rows, withFile
}

func (f *fixture) get(t *testing.T, tn store.Tenant, docID string) Document {
	t.Helper()
	d, err := f.svc.Get(ctx, tn, docID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *fixture) attach(quoteID string, ids ...string) error {
	return f.db.InTx(ctx, func(tx *store.Tx) error {
		return f.svc.Attach(ctx, tx, f.sandbox, quoteID, ids, f.clock.now())
	})
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok || e.Status != status || e.Code != code {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
}

// R-PDOC-02, R-PDOC-06, R-PDOC-07, R-PDOC-08, R-PDOC-09, R-PDOC-11: an
// upload is UPLOADED, expires 24 hours later, describes the file, has no
// customerId when the platform sends, and reads back the same.
func TestUpload_StoresAndReadsBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		d := f.upload(t, f.sandbox, Invoice, "inv.pdf")
		if !id.Valid(id.PaymentDocument, d.ID) || d.Status != StatusUploaded || d.CustomerID != "" || d.QuoteID != "" ||
			d.SizeBytes != int64(len(pdfBytes)) || d.FileName != "inv.pdf" || d.ContentType != ContentTypePDF ||
			d.DocumentType != Invoice || !d.CreatedAt.Equal(t0) || d.ExpiresAt.Sub(d.CreatedAt) != 24*time.Hour {
			t.Fatalf("%+v", d)
		}
		if got := f.get(t, f.sandbox, d.ID); got != d {
			t.Fatalf("read back %+v\nwant %+v", got, d)
		}
		if rows, withFile := f.rows(t); rows != 1 || withFile != 1 || f.files(t) != 1 {
			t.Fatalf("rows %d, with file %d, files %d", rows, withFile, f.files(t))
		}
		withCustomer, err := f.svc.Upload(ctx, f.sandbox, Upload{DocumentType: Contract, CustomerID: f.customer,
			FileName: "c.png", ContentType: ContentTypePNG, Data: pngBytes})
		if err != nil || withCustomer.CustomerID != f.customer {
			t.Fatalf("%+v %v", withCustomer, err)
		}
	})
}

// R-PDOC-07: customerId must name a live customer of the caller's
// environment; otherwise 404 CUSTOMER_NOT_FOUND and nothing is stored.
func TestUpload_UnknownCustomer_NothingStored_R_PDOC_07(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		for _, tc := range []struct {
			tn  store.Tenant
			cid string
		}{{f.sandbox, id.New(id.Customer)}, {f.prod, f.customer}, {f.sandbox, "not-an-id"}} {
			_, err := f.svc.Upload(ctx, tc.tn, Upload{DocumentType: Invoice, CustomerID: tc.cid, FileName: "a.pdf",
				ContentType: ContentTypePDF, Data: pdfBytes})
			wantCode(t, err, 404, "CUSTOMER_NOT_FOUND")
		}
		if rows, _ := f.rows(t); rows != 0 || f.files(t) != 0 {
			t.Fatalf("a refused upload left %d rows, %d files", rows, f.files(t))
		}
	})
}

// failingBlobs fails Put, after writing the file, so the cleanup is tested.
type failingBlobs struct{ blobstore.Store }

func (b failingBlobs) Put(ctx context.Context, key string, r io.Reader) (int64, string, error) {
	if _, _, err := b.Store.Put(ctx, key, r); err != nil {
		return 0, "", err
	}
	return 0, "", errors.New("disk full")
}

// An upload whose file cannot be stored leaves neither row nor file.
func TestUpload_BlobFailure_NothingLeft(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		f.svc.Blobs = failingBlobs{f.svc.Blobs}
		if _, err := f.svc.Upload(ctx, f.sandbox, Upload{DocumentType: Invoice, FileName: "a.pdf", ContentType: ContentTypePDF, Data: pdfBytes}); err == nil {
			t.Fatal("want an error")
		}
		if rows, _ := f.rows(t); rows != 0 || f.files(t) != 0 {
			t.Fatalf("left %d rows, %d files", rows, f.files(t))
		}
	})
}

// R-PDOC-12: GET is scoped to the platform and environment.
func TestGet_Tenancy_R_PDOC_12(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		d := f.upload(t, f.sandbox, Invoice, "a.pdf")
		other := store.Tenant{PlatformID: id.New(id.Platform), Env: store.EnvSandbox}
		for _, tn := range []store.Tenant{f.prod, other} {
			_, err := f.svc.Get(ctx, tn, d.ID)
			wantCode(t, err, 404, CodeNotFound)
		}
		_, err := f.svc.Get(ctx, f.sandbox, id.New(id.PaymentDocument))
		wantCode(t, err, 404, CodeNotFound)
	})
}

// R-PDOC-25, R-PDOC-11: attaching makes documents ATTACHED to the quote,
// inside the quote's transaction; GET shows the quote.
func TestAttach_MarksAttached_R_PDOC_25(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b, c := f.upload(t, f.sandbox, LogisticsBill, "a.pdf"), f.upload(t, f.sandbox, CustomsDeclaration, "b.pdf"),
			f.upload(t, f.sandbox, Invoice, "c.pdf")
		f.clock.set(t0.Add(time.Hour))
		q := id.New("Quote")
		if err := f.attach(q, a.ID, b.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		for _, docID := range []string{a.ID, b.ID, c.ID} {
			d := f.get(t, f.sandbox, docID)
			if d.Status != StatusAttached || d.QuoteID != q || d.AttachedAt == nil || !d.AttachedAt.Equal(t0.Add(time.Hour)) {
				t.Fatalf("%+v", d)
			}
		}
		// Attaching again to the same quote changes nothing.
		if err := f.attach(q, a.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// R-PDOC-29: an unknown id, or another environment's, is 404 and nothing
// is attached.
func TestAttach_NotFound_R_PDOC_29(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a := f.upload(t, f.sandbox, Invoice, "a.pdf")
		p := f.upload(t, f.prod, Invoice, "p.pdf")
		for _, missing := range []string{id.New(id.PaymentDocument), p.ID, "garbage"} {
			err := f.attach(id.New("Quote"), a.ID, missing)
			wantCode(t, err, 404, CodeNotFound)
			if e, _ := apierr.From(err); !strings.Contains(e.Reason, missing) {
				t.Fatalf("the reason names the id: %s", e.Reason)
			}
		}
		if d := f.get(t, f.sandbox, a.ID); d.Status != StatusUploaded {
			t.Fatalf("%+v", d)
		}
	})
}

// R-PDOC-13: at most 3 ids, each once.
func TestAttach_AtMostThree_R_PDOC_13(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		var ids []string
		for range 4 {
			ids = append(ids, f.upload(t, f.sandbox, Invoice, "a.pdf").ID)
		}
		if fl := fieldsOf(t, f.attach(id.New("Quote"), ids...)); fl["documentIds"] != apierr.MaxItems {
			t.Fatalf("%v", fl)
		}
		if fl := fieldsOf(t, f.attach(id.New("Quote"), ids[0], ids[0])); fl["documentIds[1]"] != apierr.UniqueItems {
			t.Fatalf("%v", fl)
		}
		for _, docID := range ids {
			if d := f.get(t, f.sandbox, docID); d.Status != StatusUploaded {
				t.Fatalf("%+v", d)
			}
		}
		if err := f.attach(id.New("Quote"), ids[:3]...); err != nil {
			t.Fatal(err)
		}
	})
}

// R-PDOC-27: one quote only; reuse is 409 PAYMENT_DOCUMENT_ALREADY_USED and
// changes nothing (the other documents of the request stay UPLOADED).
func TestAttach_AlreadyUsed_R_PDOC_27(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.upload(t, f.sandbox, Invoice, "a.pdf"), f.upload(t, f.sandbox, Contract, "b.pdf")
		q1 := id.New("Quote")
		if err := f.attach(q1, a.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, f.attach(id.New("Quote"), b.ID, a.ID), 409, CodeAlreadyUsed)
		if d := f.get(t, f.sandbox, b.ID); d.Status != StatusUploaded {
			t.Fatalf("%+v", d)
		}
		if d := f.get(t, f.sandbox, a.ID); d.QuoteID != q1 {
			t.Fatalf("%+v", d)
		}
	})
}

// R-PDOC-28, R-PDOC-09: usable until expiresAt (24 hours after upload),
// then 410 PAYMENT_DOCUMENT_EXPIRED; a used document reports 409 first.
func TestAttach_Expired_R_PDOC_28(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b, used := f.upload(t, f.sandbox, Invoice, "a.pdf"), f.upload(t, f.sandbox, Contract, "b.pdf"),
			f.upload(t, f.sandbox, Contract, "u.pdf")
		if err := f.attach(id.New("Quote"), used.ID); err != nil {
			t.Fatal(err)
		}
		f.clock.set(t0.Add(24 * time.Hour))
		wantCode(t, f.attach(id.New("Quote"), a.ID), 410, CodeExpired)
		wantCode(t, f.attach(id.New("Quote"), a.ID, used.ID), 409, CodeAlreadyUsed)
		f.clock.set(t0.Add(24*time.Hour - time.Microsecond))
		if err := f.attach(id.New("Quote"), b.ID); err != nil {
			t.Fatalf("one microsecond before expiresAt: %v", err)
		}
		if d := f.get(t, f.sandbox, a.ID); d.Status != StatusUploaded {
			t.Fatalf("%+v", d)
		}
	})
}

// R-PDOC-30: the sandbox magic fileName fails the attachment with 424 and
// changes nothing; production does not simulate; a custom decider fails
// once and then lets the retry through.
func TestAttach_AttachmentFailed_R_PDOC_30(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ok := f.upload(t, f.sandbox, Invoice, "ok.pdf")
		bad := f.upload(t, f.sandbox, Contract, "contract-ATTACHMENT-FAILED.pdf")
		wantCode(t, f.attach(id.New("Quote"), ok.ID, bad.ID), 424, CodeAttachmentFailed)
		for _, d := range []Document{ok, bad} {
			if got := f.get(t, f.sandbox, d.ID); got.Status != StatusUploaded {
				t.Fatalf("%+v", got)
			}
		}
		if f.files(t) != 2 {
			t.Fatal("a failed attachment deleted a file")
		}
		prod := f.upload(t, f.prod, Contract, "attachment-failed.pdf")
		if err := f.db.InTx(ctx, func(tx *store.Tx) error {
			return f.svc.Attach(ctx, tx, f.prod, id.New("Quote"), []string{prod.ID}, f.clock.now())
		}); err != nil {
			t.Fatalf("production never simulates: %v", err)
		}
		failed := false
		f.svc.AttachmentFails = func(store.Tenant, Document) bool { defer func() { failed = true }(); return !failed }
		q := id.New("Quote")
		wantCode(t, f.attach(q, ok.ID), 424, CodeAttachmentFailed)
		if err := f.attach(q, ok.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// "Files deleted once attached": after commit (ReleaseFiles at once, or the
// sweep); a rolled-back attachment keeps the file, and the document stays
// usable.
func TestAttach_FileDeletedAfterCommit_KeptAfterRollback(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b, c := f.upload(t, f.sandbox, Invoice, "a.pdf"), f.upload(t, f.sandbox, Contract, "b.pdf"),
			f.upload(t, f.sandbox, PurchaseOrder, "c.pdf")

		// Rollback: the quote fails after the attachment.
		errQuote := errors.New("quote failed after attaching")
		err := f.db.InTx(ctx, func(tx *store.Tx) error {
			if err := f.svc.Attach(ctx, tx, f.sandbox, id.New("Quote"), []string{a.ID}, f.clock.now()); err != nil {
				return err
			}
			return errQuote
		})
		if !errors.Is(err, errQuote) {
			t.Fatal(err)
		}
		f.svc.ReleaseFiles(ctx, f.sandbox, []string{a.ID})
		if n, err := f.svc.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("sweep after rollback deleted %d files, %v", n, err)
		}
		if d := f.get(t, f.sandbox, a.ID); d.Status != StatusUploaded || f.files(t) != 3 {
			t.Fatalf("%+v, %d files", d, f.files(t))
		}

		// Commit, then ReleaseFiles: gone at once.
		if err := f.attach(id.New("Quote"), a.ID); err != nil {
			t.Fatal(err)
		}
		if f.files(t) != 3 {
			t.Fatal("attaching alone must not touch files")
		}
		f.svc.ReleaseFiles(ctx, f.sandbox, []string{a.ID, b.ID})
		if f.files(t) != 2 {
			t.Fatalf("%d files after ReleaseFiles", f.files(t))
		}
		// Commit without ReleaseFiles (the caller died): the sweep deletes it.
		if err := f.attach(id.New("Quote"), b.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := f.svc.Sweep(ctx); err != nil || n != 1 || f.files(t) != 1 {
			t.Fatalf("sweep deleted %d, %v; %d files left", n, err, f.files(t))
		}
		// The metadata stays; the unattached document keeps its file.
		if d := f.get(t, f.sandbox, b.ID); d.Status != StatusAttached || d.SizeBytes != int64(len(pdfBytes)) {
			t.Fatalf("%+v", d)
		}
		if rows, withFile := f.rows(t); rows != 3 || withFile != 1 {
			t.Fatalf("rows %d with file %d", rows, withFile)
		}
		if r, err := f.svc.Blobs.Get(ctx, mustRow(t, f, c.ID).BlobKey); err != nil {
			t.Fatal(err)
		} else {
			r.Close()
		}
	})
}

func mustRow(t *testing.T, f *fixture, docID string) store.PaymentDocument {
	t.Helper()
	r, err := f.db.Read().GetPaymentDocument(ctx, f.sandbox, docID, false)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// R-PDOC-27 under concurrency: many quotes race for one document; exactly
// one gets it, the others 409.
func TestAttach_ConcurrentQuotes_R_PDOC_27(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a := f.upload(t, f.sandbox, Invoice, "a.pdf")
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = f.attach(id.New("Quote"), a.ID) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
				continue
			}
			wantCode(t, err, 409, CodeAlreadyUsed)
		}
		if won != 1 {
			t.Fatalf("%d quotes got the document", won)
		}
	})
}

// R-PDOC-15, R-PDOC-24: AttachRequired, the whole quote step, errors in
// the documented order.
func TestAttachRequired(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		po := f.upload(t, f.sandbox, PurchaseOrder, "po.pdf")
		inv := f.upload(t, f.sandbox, Invoice, "inv.pdf")
		mine, err := f.svc.Upload(ctx, f.sandbox, Upload{DocumentType: PurchaseOrder, CustomerID: f.customer,
			FileName: "m.pdf", ContentType: ContentTypePDF, Data: pdfBytes})
		if err != nil {
			t.Fatal(err)
		}
		run := func(p Payout) error {
			if p.QuoteID == "" {
				p.QuoteID = id.New("Quote")
			}
			return f.db.InTx(ctx, func(tx *store.Tx) error { return f.svc.AttachRequired(ctx, tx, f.sandbox, p, f.clock.now()) })
		}
		// Purpose outside the table, and a bad id list, in one 400.
		fl := fieldsOf(t, run(Payout{Purpose: "GOODS_OR_SERVICES", DocumentIDs: []string{po.ID, po.ID}}))
		if fl["purposeOfPayment"] != apierr.Enum || fl["documentIds[1]"] != apierr.UniqueItems {
			t.Fatalf("%v", fl)
		}
		// 404 before DOCUMENTS_REQUIRED.
		wantCode(t, run(Payout{Purpose: "TRAVEL", DocumentIDs: []string{id.New(id.PaymentDocument)}}), 404, CodeNotFound)
		// Missing requirements, none attached.
		err = run(Payout{Purpose: "EXPORTED_GOODS_POSTPAYMENT", DocumentIDs: []string{inv.ID}})
		if m := missingOf(t, err); len(m) != 2 || m[0] != "LOGISTICS_BILL" || m[1] != "CUSTOMS_DECLARATION" {
			t.Fatalf("%v", m)
		}
		// No documents at all on a payout that needs them.
		if m := missingOf(t, run(Payout{Purpose: "EXPORTED_GOODS_PREPAYMENT"})); len(m) != 1 || m[0] != "PURCHASE_ORDER" {
			t.Fatalf("%v", m)
		}
		// A customer's document on the platform's payout.
		if fl := fieldsOf(t, run(Payout{Purpose: "EXPORTED_GOODS_PREPAYMENT", DocumentIDs: []string{mine.ID}})); fl["documentIds[0]"] == "" {
			t.Fatalf("%v", fl)
		}
		for _, d := range []Document{po, inv, mine} {
			if got := f.get(t, f.sandbox, d.ID); got.Status != StatusUploaded {
				t.Fatalf("refused requests attached %+v", got)
			}
		}
		// The customer's own document on its payout; a platform document
		// is accepted for any sender.
		if err := run(Payout{Purpose: "EXPORTED_GOODS_PREPAYMENT", SenderCustomerID: f.customer, DocumentIDs: []string{mine.ID}}); err != nil {
			t.Fatal(err)
		}
		q := id.New("Quote")
		if err := run(Payout{QuoteID: q, Purpose: "OFFICE_EXPENSES", DocumentIDs: []string{inv.ID, f.upload(t, f.sandbox, Contract, "c.pdf").ID}}); err != nil {
			t.Fatal(err)
		}
		if d := f.get(t, f.sandbox, inv.ID); d.QuoteID != q {
			t.Fatalf("%+v", d)
		}
		// Reuse after success: 409.
		wantCode(t, run(Payout{Purpose: "EXPORTED_GOODS_POSTPAYMENT", DocumentIDs: []string{
			f.upload(t, f.sandbox, LogisticsBill, "l.pdf").ID, f.upload(t, f.sandbox, CustomsDeclaration, "cd.pdf").ID, inv.ID}}),
			409, CodeAlreadyUsed)
	})
}

// Sweep: unfinished uploads (their node died) are removed with their file
// after PendingTimeout; expired documents lose their file after
// ExpiredFileGrace but stay readable.
func TestSweep_AbandonedAndExpired(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		pending := func(created time.Time) store.PaymentDocument {
			row := store.PaymentDocument{ID: id.New(id.PaymentDocument), Tenant: f.sandbox, DocumentType: Invoice,
				FileName: "p.pdf", ContentType: ContentTypePDF, SizeBytes: int64(len(pdfBytes)), SHA256: "x",
				Status: store.PaymentDocPending, BlobKey: blobstore.NewKey(), ExpiresAt: created.Add(Validity),
				CreatedAt: created, UpdatedAt: created}
			if err := f.db.Write().InsertPaymentDocument(ctx, row); err != nil {
				t.Fatal(err)
			}
			if _, _, err := f.svc.Blobs.Put(ctx, row.BlobKey, strings.NewReader(string(pdfBytes))); err != nil {
				t.Fatal(err)
			}
			return row
		}
		old := pending(t0.Add(-2 * time.Hour))
		pending(t0.Add(-time.Minute)) // recent: its upload may still finish
		if _, err := f.svc.Get(ctx, f.sandbox, old.ID); err == nil {
			t.Fatal("a pending upload is not visible")
		}
		kept := f.upload(t, f.sandbox, Invoice, "k.pdf")
		if n, err := f.svc.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("swept %d, %v", n, err)
		}
		if rows, withFile := f.rows(t); rows != 2 || withFile != 2 || f.files(t) != 2 {
			t.Fatalf("rows %d with file %d files %d", rows, withFile, f.files(t))
		}
		// A pending upload that finishes after being discarded fails.
		if err := f.db.Write().PublishPaymentDocument(ctx, f.sandbox, old.ID, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}

		// Expired: the file stays through the grace period, then goes.
		f.clock.set(kept.ExpiresAt.Add(ExpiredFileGrace - time.Second))
		if n, err := f.svc.Sweep(ctx); err != nil || n != 1 { // only the (now stale) fresh upload
			t.Fatalf("swept %d, %v", n, err)
		}
		if f.files(t) != 1 {
			t.Fatalf("%d files", f.files(t))
		}
		f.clock.set(kept.ExpiresAt.Add(ExpiredFileGrace + time.Second))
		if n, err := f.svc.Sweep(ctx); err != nil || n != 1 || f.files(t) != 0 {
			t.Fatalf("swept %d, %v, %d files", n, err, f.files(t))
		}
		if d := f.get(t, f.sandbox, kept.ID); d.Status != StatusUploaded {
			t.Fatalf("%+v", d)
		}
		wantCode(t, f.attach(id.New("Quote"), kept.ID), 410, CodeExpired)
	})
}

// RunMaintenance sweeps at once and stops with its context.
func TestRunMaintenance_SweepsAndStops(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a := f.upload(t, f.sandbox, Invoice, "a.pdf")
		if err := f.attach(id.New("Quote"), a.ID); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { f.svc.RunMaintenance(c, time.Millisecond); close(done) }()
		deadline := time.Now().Add(5 * time.Second)
		for f.files(t) != 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		<-done
		if f.files(t) != 0 {
			t.Fatal("the maintenance loop did not delete the attached file")
		}
	})
}
