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
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
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
func TestPaymentDocuments_Upload(t *testing.T) {
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
func TestPaymentDocuments_FormRules(t *testing.T) {
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
		expect(t, e.do("POST", "/payment-documents", `{"documentType":"INVOICE"}`), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
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
