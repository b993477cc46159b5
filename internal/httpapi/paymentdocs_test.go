package httpapi

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/paymentdocs"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Files of each accepted format, and two that are none of them.
var (
	pdocPDF  = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	pdocPNG  = append([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, bytes.Repeat([]byte{0}, 24)...)
	pdocJPEG = append([]byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}, bytes.Repeat([]byte{7}, 24)...)
	pdocGIF  = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,")
	pdocText = []byte("plain text pretending to be a PDF\n")
)

// pdocEnv runs fn on a server with its own blob directory, on every engine.
func pdocEnv(t *testing.T, fn func(t *testing.T, e *env, blobDir string)) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		dir := t.TempDir()
		fn(t, newEnv(t, db, Options{BlobDir: dir}), dir)
	})
}

type pdocPart struct {
	field, fileName string
	data            []byte
	isFile          bool
}

func pdocFile(name string, data []byte) pdocPart { return pdocPart{"file", name, data, true} }
func pdocField(k, v string) pdocPart             { return pdocPart{field: k, data: []byte(v)} }

// pdocPost sends POST /payment-documents with the given parts.
func (e *env) pdocPost(t *testing.T, parts []pdocPart, opts ...reqOpt) resp {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.isFile {
			h.Set("Content-Disposition", `form-data; name="`+p.field+`"; filename="`+p.fileName+`"`)
			h.Set("Content-Type", "application/octet-stream")
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.field+`"`)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return e.do("POST", "/payment-documents", b.Bytes(), append([]reqOpt{withHeader("Content-Type", w.FormDataContentType())}, opts...)...)
}

// pdocUpload uploads a PDF of documentType named name and returns its id.
func (e *env) pdocUpload(t *testing.T, documentType, name string) string {
	t.Helper()
	r := e.pdocPost(t, []pdocPart{pdocFile(name, pdocPDF), pdocField("documentType", documentType)})
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)["id"].(string)
}

func (e *env) pdocGet(t *testing.T, docID string) map[string]any {
	t.Helper()
	r := e.do("GET", "/payment-documents/"+docID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// pdocStored counts payment document rows and blob files: a refused
// request must leave both unchanged.
func (e *env) pdocStored(t *testing.T, blobDir string) [2]int {
	t.Helper()
	rows, _, err := e.db.Read().PaymentDocumentCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.Walk(blobDir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Base(filepath.Dir(path)) != "tmp" {
			files++
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return [2]int{rows, files}
}

// R-PDOC-01, R-PDOC-02, R-PDOC-06, R-PDOC-07, R-PDOC-08, R-PDOC-09,
// R-PDOC-11, R-CONV-02: a PNG upload is 201 with the document, UPLOADED,
// expiring 24 hours after creation, describing the sent file; GET returns
// the same.
func TestPaymentDocuments_Upload_R_PDOC_01_02_06_08_09(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		r := e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("invoice-7.png", pdocPNG)})
		expect(t, r, http.StatusCreated, "")
		d := r.JSON(t)
		if !id.Valid(id.PaymentDocument, d["id"].(string)) || d["status"] != "UPLOADED" || d["documentType"] != "INVOICE" ||
			d["fileName"] != "invoice-7.png" || d["sizeBytes"] != float64(len(pdocPNG)) || d["contentType"] != "image/png" {
			t.Fatalf("%s", r.Body)
		}
		if _, ok := d["customerId"]; ok {
			t.Fatal("customerId is omitted when the platform is the sender (R-PDOC-07)")
		}
		if _, ok := d["quoteId"]; ok {
			t.Fatal("no quote before attachment")
		}
		created, _ := time.Parse(time.RFC3339Nano, d["createdAt"].(string))
		expires, _ := time.Parse(time.RFC3339Nano, d["expiresAt"].(string))
		if expires.Sub(created) != 24*time.Hour {
			t.Fatalf("expiresAt - createdAt = %s", expires.Sub(created))
		}
		if got := e.pdocGet(t, d["id"].(string)); !reflect.DeepEqual(got, d) {
			t.Fatalf("GET %v\nPOST %v", got, d)
		}
		// JPEG and PDF too; R-PDOC-31: any valid file for any type.
		for typ, f := range map[string][]byte{"CONTRACT": pdocJPEG, "HOTEL_BOOKING_CONFIRMATION": pdocPDF} {
			expect(t, e.pdocPost(t, []pdocPart{pdocField("documentType", typ), pdocFile("x", f)}), http.StatusCreated, "")
		}
		if got := e.pdocStored(t, dir); got != [2]int{3, 3} {
			t.Fatalf("stored %v", got)
		}
	})
}

// R-PDOC-03: the format is detected from the contents: a PDF named .png is
// a PDF; GIF and text are 400 INVALID_INPUT on `file`, and nothing is
// stored.
func TestPaymentDocuments_FormatFromContent_R_PDOC_03(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		r := e.pdocPost(t, []pdocPart{pdocField("documentType", "CONTRACT"), pdocFile("scan.png", pdocPDF)})
		expect(t, r, http.StatusCreated, "")
		if ct := r.JSON(t)["contentType"]; ct != "application/pdf" {
			t.Fatalf("contentType %v", ct)
		}
		before := e.pdocStored(t, dir)
		for name, data := range map[string][]byte{"anim.gif": pdocGIF, "x.pdf": pdocText} {
			r := e.pdocPost(t, []pdocPart{pdocField("documentType", "CONTRACT"), pdocFile(name, data)})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fieldErrors(t, r)["file"] != "format" {
				t.Fatalf("%s: %s", name, r.Body)
			}
		}
		if got := e.pdocStored(t, dir); got != before {
			t.Fatalf("refused uploads stored something: %v, before %v", got, before)
		}
	})
}

// R-PDOC-04: 1 to 8,000,000 bytes: 0 and 8,000,001 bytes are 400
// INVALID_INPUT, and so is a file far over the limit (no 413), a valid
// 8,000,000-byte file is 201. Nothing is stored on refusal.
func TestPaymentDocuments_SizeBounds_R_PDOC_04(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		png := func(n int) []byte {
			b := make([]byte, n)
			copy(b, pdocPNG[:8])
			return b
		}
		refused := map[int]string{0: "minLength", 1: "format", paymentdocs.MaxFileBytes + 1: "maxLength"}
		for size, constraint := range refused {
			data := png(max(size, 8))[:size]
			r := e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("f.png", data)})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fieldErrors(t, r)["file"] != constraint {
				t.Fatalf("%d bytes: %s", size, r.Body)
			}
		}
		// Files longer than the route's body limit are read no further
		// than it, and still refused as too large (R-PDOC-04), not 413.
		for _, size := range []int{paymentdocs.MaxUploadBody + 1, 3 * paymentdocs.MaxUploadBody} {
			r := e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("f.png", png(size))})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fieldErrors(t, r)["file"] != "maxLength" {
				t.Fatalf("%d bytes: %s", size, r.Body)
			}
		}
		// Another part making the body too long is named instead.
		r := e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("f.png", pdocPNG),
			pdocField("padding", string(make([]byte, paymentdocs.MaxUploadBody)))})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["padding"] != "maxLength" {
			t.Fatalf("%s", r.Body)
		}
		if got := e.pdocStored(t, dir); got != [2]int{0, 0} {
			t.Fatalf("refused uploads stored %v", got)
		}
		r = e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("big.png", png(paymentdocs.MaxFileBytes))})
		expect(t, r, http.StatusCreated, "")
		if r.JSON(t)["sizeBytes"] != float64(paymentdocs.MaxFileBytes) {
			t.Fatalf("%s", r.Body)
		}
		if got := e.pdocStored(t, dir); got != [2]int{1, 1} {
			t.Fatalf("stored %v", got)
		}
	})
}

// R-PDOC-05, R-PDOC-10, R-ERR-02: one file per request; documentType from
// the table; every invalid field listed at once; nothing stored.
func TestPaymentDocuments_FormRules_R_PDOC_05_10(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		r := e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("a.pdf", pdocPDF), pdocFile("b.pdf", pdocPDF)})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["file"] != "maxItems" {
			t.Fatalf("%s", r.Body)
		}
		r = e.pdocPost(t, []pdocPart{pdocField("documentType", "PASSPORT"), pdocFile("a.gif", pdocGIF), pdocField("extra", "1")})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if f := fieldErrors(t, r); f["documentType"] != "enum" || f["file"] != "format" || f["extra"] != "additionalProperties" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("POST", "/payment-documents", `{"documentType":"INVOICE"}`), http.StatusBadRequest, "INVALID_INPUT")
		if got := e.pdocStored(t, dir); got != [2]int{0, 0} {
			t.Fatalf("stored %v", got)
		}
		for _, typ := range paymentdocs.DocumentTypes() {
			e.pdocUpload(t, typ, typ+".pdf")
		}
	})
}

// R-PDOC-07: customerId is kept when sent; an unknown customer is 404
// CUSTOMER_NOT_FOUND and nothing is stored.
func TestPaymentDocuments_Customer_R_PDOC_07(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custBusiness("REG-100"))["id"].(string)
		r := e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocField("customerId", cid), pdocFile("a.pdf", pdocPDF)})
		expect(t, r, http.StatusCreated, "")
		if r.JSON(t)["customerId"] != cid {
			t.Fatalf("%s", r.Body)
		}
		before := e.pdocStored(t, dir)
		r = e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocField("customerId", id.New(id.Customer)), pdocFile("a.pdf", pdocPDF)})
		expect(t, r, http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		// The sandbox customer is unknown to the production environment.
		r = e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocField("customerId", cid), pdocFile("a.pdf", pdocPDF)},
			withCreds(e.production))
		expect(t, r, http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		if got := e.pdocStored(t, dir); got != before {
			t.Fatalf("stored %v, before %v", got, before)
		}
	})
}

// R-PDOC-12: GET is scoped to the caller's environment; unknown ids are 404
// PAYMENT_DOCUMENT_NOT_FOUND. Changes need TRANSACT or MANAGE, reads VIEW.
func TestPaymentDocuments_GetTenancy_R_PDOC_12(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		docID := e.pdocUpload(t, "INVOICE", "a.pdf")
		expect(t, e.do("GET", "/payment-documents/"+docID, nil, withCreds(e.production)), http.StatusNotFound, "PAYMENT_DOCUMENT_NOT_FOUND")
		expect(t, e.do("GET", "/payment-documents/"+id.New(id.PaymentDocument), nil), http.StatusNotFound, "PAYMENT_DOCUMENT_NOT_FOUND")
		expect(t, e.do("GET", "/payment-documents/nonsense", nil), http.StatusNotFound, "PAYMENT_DOCUMENT_NOT_FOUND")

		tok := e.do("POST", "/tokens", `{"name":"viewer","permissions":["VIEW"]}`).JSON(t)
		viewer := withCreds(tok["clientId"].(string) + ":" + tok["clientSecret"].(string))
		expect(t, e.do("GET", "/payment-documents/"+docID, nil, viewer), http.StatusOK, "")
		expect(t, e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("a.pdf", pdocPDF)}, viewer),
			http.StatusForbidden, "FORBIDDEN")
	})
}

// R-IDEM-02 on uploads: the same key replays the first document; one row.
func TestPaymentDocuments_UploadReplay_R_IDEM_02(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		parts := []pdocPart{pdocField("documentType", "INVOICE"), pdocFile("a.pdf", pdocPDF)}
		// One body, sent twice: a multipart writer picks a new boundary each time.
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		_ = w.WriteField(parts[0].field, string(parts[0].data))
		fw, _ := w.CreateFormFile("file", "a.pdf")
		_, _ = fw.Write(pdocPDF)
		_ = w.Close()
		send := func() resp {
			return e.do("POST", "/payment-documents", b.Bytes(), withHeader("Content-Type", w.FormDataContentType()), key("up-1"))
		}
		first, second := send(), send()
		expect(t, first, http.StatusCreated, "")
		if second.Status != http.StatusCreated || !bytes.Equal(first.Body, second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %d %s", second.Status, second.Body)
		}
		if got := e.pdocStored(t, dir); got != [2]int{1, 1} {
			t.Fatalf("stored %v", got)
		}
	})
}

// pdocQuotes registers POST /test/pdoc-quotes, a stand-in for POST /quotes
// (not built yet) that runs the documents step exactly as the quote
// service is to: the pure checks first, then AttachRequired and the quote
// itself (a platform row named "pdoc-quote", counted with countEffects) in
// one transaction that records the response, then ReleaseFiles. Body:
// {"currency", "beneficiaryType", "purposeOfPayment", "documentIds"}; the
// destination is always an external bank account. It returns how many
// times the handler ran, to tell a re-run from a replay.
func (e *env) pdocQuotes(t *testing.T) (*paymentdocs.Service, *atomic.Int32) {
	t.Helper()
	svc, err := e.srv.PaymentDocuments()
	if err != nil {
		t.Fatal(err)
	}
	runs := &atomic.Int32{}
	e.srv.handle(route{pattern: "POST /test/pdoc-quotes", need: auth.NeedMoney, idempotent: true, h: func(w http.ResponseWriter, r *http.Request) error {
		runs.Add(1)
		var req struct {
			Currency         string   `json:"currency"`
			BeneficiaryType  string   `json:"beneficiaryType"`
			PurposeOfPayment string   `json:"purposeOfPayment"`
			DocumentIDs      []string `json:"documentIds"`
		}
		if err := jsonx.Decode(bodyOf(r), &req); err != nil {
			return err
		}
		kind := paymentdocs.DestExternalBankAccount
		if err := paymentdocs.ValidateDocumentIDs(req.Currency, kind, req.BeneficiaryType, req.DocumentIDs); err != nil {
			return err
		}
		if err := paymentdocs.RequireIdempotencyKey(r.Context(), req.DocumentIDs); err != nil {
			return err
		}
		if c := idempotency.FromContext(r.Context()); c != nil {
			c.Status = http.StatusOK
		}
		tenant := principal(r).Tenant
		quote := map[string]any{"id": id.New("Quote"), "documentIds": req.DocumentIDs}
		err := e.db.InTx(r.Context(), func(tx *store.Tx) error {
			if paymentdocs.RequiresDocuments(req.Currency, kind, req.BeneficiaryType) {
				p := paymentdocs.Payout{QuoteID: quote["id"].(string), Purpose: req.PurposeOfPayment, DocumentIDs: req.DocumentIDs}
				if err := svc.AttachRequired(r.Context(), tx, tenant, p, tx.Now()); err != nil {
					return err
				}
			}
			if err := tx.InsertPlatform(r.Context(), store.Platform{ID: id.New(id.Platform), Name: "pdoc-quote", CreatedAt: tx.Now()}); err != nil {
				return err
			}
			return idempotency.Record(r.Context(), tx, quote)
		})
		if err != nil {
			return err
		}
		svc.ReleaseFiles(r.Context(), tenant, req.DocumentIDs)
		writeJSON(w, http.StatusOK, quote)
		return nil
	}})
	e.undocumented["/"+Version+"/test/pdoc-quotes"] = true
	return svc, runs
}

func pdocQuote(purpose string, ids ...string) map[string]any {
	return map[string]any{"currency": "CNY", "beneficiaryType": "BUSINESS", "purposeOfPayment": purpose, "documentIds": ids}
}

func replayed(r resp) bool { return r.Header.Get("Idempotent-Replayed") == "true" }

// R-PDOC-25, R-IDEM-07, R-PDOC-27, R-IDEM-11 (409): a document attaches to
// the first quote (ATTACHED, with its quoteId, file deleted); a replay of
// that quote returns it again without consuming anything; a second quote
// that reuses it gets 409, which is not stored: the same key runs again,
// and a corrected request under that key is evaluated afresh.
func TestPaymentDocuments_Quote409RunsAgain_R_IDEM_11(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		_, runs := e.pdocQuotes(t)
		a, b := e.pdocUpload(t, "PURCHASE_ORDER", "a.pdf"), e.pdocUpload(t, "PURCHASE_ORDER", "b.pdf")
		first := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", a), key("q-1"))
		expect(t, first, http.StatusOK, "")
		q1 := first.JSON(t)["id"].(string)
		if d := e.pdocGet(t, a); d["status"] != "ATTACHED" || d["quoteId"] != q1 || d["attachedAt"] == nil {
			t.Fatalf("%v", d)
		}
		if got := e.pdocStored(t, dir); got != [2]int{2, 1} {
			t.Fatalf("the attached file is deleted once the quote commits: %v", got)
		}
		// R-IDEM-07: same key, same quote, nothing re-consumed.
		again := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", a), key("q-1"))
		if !replayed(again) || !bytes.Equal(again.Body, first.Body) || runs.Load() != 1 {
			t.Fatalf("replay %s (runs %d)", again.Body, runs.Load())
		}

		reuse := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", a), key("q-2"))
		expect(t, reuse, http.StatusConflict, "PAYMENT_DOCUMENT_ALREADY_USED")
		retry := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", a), key("q-2"))
		expect(t, retry, http.StatusConflict, "PAYMENT_DOCUMENT_ALREADY_USED")
		if replayed(retry) || runs.Load() != 3 {
			t.Fatalf("a 409 is run again, not replayed (runs %d)", runs.Load())
		}
		if n := e.countEffects(t, "pdoc-quote"); n != 1 {
			t.Fatalf("a 409 created a quote: %d", n)
		}
		fixed := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", b), key("q-2"))
		expect(t, fixed, http.StatusOK, "")
		if d := e.pdocGet(t, b); d["status"] != "ATTACHED" || d["quoteId"] != fixed.JSON(t)["id"] {
			t.Fatalf("%v", d)
		}
		if d := e.pdocGet(t, a); d["quoteId"] != q1 {
			t.Fatalf("the reused document moved: %v", d)
		}
		if n := e.countEffects(t, "pdoc-quote"); n != 2 {
			t.Fatalf("%d quotes", n)
		}
	})
}

// R-PDOC-28, R-IDEM-11 (410): an expired document is 410, not stored; a
// retry with the same key runs again; no quote.
func TestPaymentDocuments_Quote410RunsAgain_R_IDEM_11(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		_, runs := e.pdocQuotes(t)
		a := e.pdocUpload(t, "HOTEL_BOOKING_CONFIRMATION", "h.pdf")
		e.db.SetClock(func() time.Time { return time.Now().Add(24*time.Hour + time.Minute) })
		for i := range 2 {
			r := e.do("POST", "/test/pdoc-quotes", pdocQuote("HOTEL_ACCOMMODATION", a), key("q-410"))
			expect(t, r, http.StatusGone, "PAYMENT_DOCUMENT_EXPIRED")
			if replayed(r) || runs.Load() != int32(i+1) {
				t.Fatalf("attempt %d: a 410 is run again, not replayed", i)
			}
		}
		if n := e.countEffects(t, "pdoc-quote"); n != 0 {
			t.Fatalf("a 410 created %d quotes", n)
		}
		if d := e.pdocGet(t, a); d["status"] != "UPLOADED" {
			t.Fatalf("%v", d)
		}
	})
}

// R-PDOC-30, R-IDEM-11 (424): the sandbox magic fileName fails the
// attachment with 424, which is not stored and creates no quote; when the
// failure clears, the retry with the same key succeeds once and is then
// replayed: at most one quote.
func TestPaymentDocuments_Quote424RetrySameKey_R_IDEM_11_R_PDOC_30(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		svc, runs := e.pdocQuotes(t)
		bad := e.pdocUpload(t, "PURCHASE_ORDER", "po-Attachment-Failed.pdf")
		for i := range 2 {
			r := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", bad), key("q-424"))
			expect(t, r, http.StatusFailedDependency, "PAYMENT_DOCUMENT_ATTACHMENT_FAILED")
			if replayed(r) || runs.Load() != int32(i+1) {
				t.Fatalf("attempt %d: a 424 is run again, not replayed", i)
			}
		}
		if d := e.pdocGet(t, bad); d["status"] != "UPLOADED" || e.countEffects(t, "pdoc-quote") != 0 {
			t.Fatalf("a 424 changed something: %v", d)
		}
		if got := e.pdocStored(t, dir); got != [2]int{1, 1} {
			t.Fatalf("a failed attachment lost the file: %v", got)
		}

		// A partner that fails once, then takes the file.
		var calls atomic.Int32
		svc.AttachmentFails = func(store.Tenant, paymentdocs.Document) bool { return calls.Add(1) == 1 }
		doc := e.pdocUpload(t, "PURCHASE_ORDER", "po.pdf")
		body := pdocQuote("EXPORTED_GOODS_PREPAYMENT", doc)
		expect(t, e.do("POST", "/test/pdoc-quotes", body, key("q-flaky")), http.StatusFailedDependency, "PAYMENT_DOCUMENT_ATTACHMENT_FAILED")
		ok := e.do("POST", "/test/pdoc-quotes", body, key("q-flaky"))
		expect(t, ok, http.StatusOK, "")
		again := e.do("POST", "/test/pdoc-quotes", body, key("q-flaky"))
		if !replayed(again) || !bytes.Equal(again.Body, ok.Body) {
			t.Fatalf("the success is replayed: %s", again.Body)
		}
		if n := e.countEffects(t, "pdoc-quote"); n != 1 {
			t.Fatalf("%d quotes after a 424 and its retry", n)
		}
		if d := e.pdocGet(t, doc); d["status"] != "ATTACHED" || d["quoteId"] != ok.JSON(t)["id"] {
			t.Fatalf("%v", d)
		}
	})
}

// R-IDEM-12, R-PDOC-24, R-ERR-04, R-PDOC-29, R-PDOC-15: 400
// DOCUMENTS_REQUIRED (with details.missingRequirements), 400 INVALID_INPUT
// and 404 PAYMENT_DOCUMENT_NOT_FOUND are stored: the same request with the
// same key gets the same answer replayed without running again. A
// corrected request needs a new key (under the old one it is 409 CONFLICT:
// a key belongs to its first request), and with a new key it is evaluated
// afresh.
func TestPaymentDocuments_QuoteErrorsReplayed_R_IDEM_12(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		_, runs := e.pdocQuotes(t)
		flight := e.pdocUpload(t, "FLIGHT_TICKET", "f.pdf")
		cases := []struct {
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"k-docs", pdocQuote("TRAVEL", flight), http.StatusBadRequest, "DOCUMENTS_REQUIRED"},
			{"k-purpose", pdocQuote("GOODS_OR_SERVICES", flight), http.StatusBadRequest, "INVALID_INPUT"},
			{"k-404", pdocQuote("TRAVEL", flight, id.New(id.PaymentDocument)), http.StatusNotFound, "PAYMENT_DOCUMENT_NOT_FOUND"},
		}
		for _, c := range cases {
			first := e.do("POST", "/test/pdoc-quotes", c.body, key(c.key))
			expect(t, first, c.status, c.code)
			n := runs.Load()
			again := e.do("POST", "/test/pdoc-quotes", c.body, key(c.key))
			if !replayed(again) || again.Status != c.status || !bytes.Equal(again.Body, first.Body) || runs.Load() != n {
				t.Fatalf("%s: not replayed: %d %s", c.code, again.Status, again.Body)
			}
		}
		first := e.do("POST", "/test/pdoc-quotes", cases[0].body, key("k-docs"))
		details, _ := first.JSON(t)["details"].(map[string]any)
		if m, _ := details["missingRequirements"].([]any); !reflect.DeepEqual(m, []any{"TRAVEL_DOCUMENT", "HOTEL_BOOKING_CONFIRMATION"}) {
			t.Fatalf("missingRequirements %v", details["missingRequirements"])
		}
		fixed := pdocQuote("TRAVEL", flight, e.pdocUpload(t, "TRAVEL_DOCUMENT", "t.pdf"), e.pdocUpload(t, "HOTEL_BOOKING_CONFIRMATION", "h.pdf"))
		// R-IDEM-12: the fixed request under the spent key gets the stored error.
		if r := e.do("POST", "/test/pdoc-quotes", fixed, key("k-docs")); !replayed(r) || !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("fixed request under the same key: %d %s", r.Status, r.Body)
		}
		expect(t, e.do("POST", "/test/pdoc-quotes", fixed, key("k-docs-2")), http.StatusOK, "")
		if n := e.countEffects(t, "pdoc-quote"); n != 1 {
			t.Fatalf("%d quotes", n)
		}
	})
}

// R-IDEM-05, R-IDEM-06, R-PDOC-14, R-PDOC-13: documentIds need an
// Idempotency-Key and a CNY business bank payout, at most 3; refusals
// change nothing.
func TestPaymentDocuments_QuoteDocumentRules_R_IDEM_05_R_PDOC_14(t *testing.T) {
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		e.pdocQuotes(t)
		a := e.pdocUpload(t, "PURCHASE_ORDER", "a.pdf")
		r := e.do("POST", "/test/pdoc-quotes", pdocQuote("EXPORTED_GOODS_PREPAYMENT", a))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["Idempotency-Key"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		usd := map[string]any{"currency": "USD", "beneficiaryType": "BUSINESS", "documentIds": []string{a}}
		r = e.do("POST", "/test/pdoc-quotes", usd, key("k-usd"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["documentIds"] == "" {
			t.Fatalf("%s", r.Body)
		}
		four := pdocQuote("EXPORTED_GOODS_PREPAYMENT", a, id.New(id.PaymentDocument), id.New(id.PaymentDocument), id.New(id.PaymentDocument))
		r = e.do("POST", "/test/pdoc-quotes", four, key("k-4"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["documentIds"] != "maxItems" {
			t.Fatalf("%s", r.Body)
		}
		if d := e.pdocGet(t, a); d["status"] != "UPLOADED" || e.countEffects(t, "pdoc-quote") != 0 {
			t.Fatalf("a refused quote changed something: %v", d)
		}
		// R-IDEM-06: a quote without documents needs no key.
		expect(t, e.do("POST", "/test/pdoc-quotes", map[string]any{"currency": "USD"}), http.StatusOK, "")
	})
}
