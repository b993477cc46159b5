package httpapi

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Small files of each format, detected from their first bytes.
var (
	testPDF  = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	testJPEG = append([]byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}, bytes.Repeat([]byte{0x42}, 64)...)
	testPNG  = append([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, bytes.Repeat([]byte{0x00}, 64)...)
	testGIF  = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,")
)

// fileEnv is a server with its own blob directory, on every engine.
func fileEnv(t *testing.T, fn func(t *testing.T, e *env, blobDir string)) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		dir := t.TempDir()
		fn(t, newEnv(t, db, Options{BlobDir: dir}), dir)
	})
}

// formFile is one file part of a multipart body.
type formFile struct {
	field, name string
	data        []byte
}

// multipartBody encodes fields (name, value pairs, in order) and files.
func multipartBody(t *testing.T, fields []string, files ...formFile) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := w.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+f.field+`"; filename="`+f.name+`"`)
		h.Set("Content-Type", "application/octet-stream")
		p, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), w.FormDataContentType()
}

// sendForm sends a multipart request.
func (e *env) sendForm(t *testing.T, method, path string, fields []string, files []formFile, opts ...reqOpt) resp {
	t.Helper()
	body, ct := multipartBody(t, fields, files...)
	return e.do(method, path, body, append([]reqOpt{withHeader("Content-Type", ct)}, opts...)...)
}

// uploadDoc uploads a document of typ for holder (side may be "").
func (e *env) uploadDoc(t *testing.T, holder, typ, side string, f formFile, opts ...reqOpt) resp {
	t.Helper()
	fields := []string{"documentHolder", holder, "documentType", typ, "country", "US"}
	if side != "" {
		fields = append(fields, "side", side)
	}
	return e.sendForm(t, "POST", "/documents", fields, []formFile{f}, opts...)
}

// blobFiles counts the files under a blob directory.
func blobFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n++
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n
}

func (e *env) documentRows(t *testing.T) int {
	t.Helper()
	c, err := e.db.Read().CustomerRowCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c["customer_documents"]
}

// R-ERR-18 context: PDF, JPEG and PNG are accepted, their type detected
// from the contents (not the name), and only metadata comes back.
func TestDocuments_UploadDetectsType(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Dana Upload"))["id"].(string)
		cases := []struct {
			typ, side, name, ct string
			data                []byte
		}{
			{"PASSPORT", "", "scan.png", "application/pdf", testPDF}, // misleading name: the contents decide
			{"DRIVERS_LICENSE", "FRONT", "front.jpg", "image/jpeg", testJPEG},
			{"DRIVERS_LICENSE", "BACK", `C:\Users\dana\back.png`, "image/png", testPNG},
		}
		var ids []string
		for _, c := range cases {
			r := e.uploadDoc(t, cid, c.typ, c.side, formFile{"file", c.name, c.data})
			expect(t, r, http.StatusCreated, "")
			d := r.JSON(t)
			if d["contentType"] != c.ct || d["sizeBytes"] != float64(len(c.data)) || d["documentHolder"] != cid ||
				d["documentType"] != c.typ || d["country"] != "US" {
				t.Fatalf("%s: %v", c.name, d)
			}
			if bytes.Contains(r.Body, c.data[:4]) {
				t.Fatalf("the response carries file bytes: %s", r.Body)
			}
			ids = append(ids, d["id"].(string))
		}
		if got := e.do("GET", "/documents/"+ids[2], nil).JSON(t); got["fileName"] != "back.png" || got["side"] != "BACK" {
			t.Fatalf("file name keeps its last element only: %v", got)
		}
		l := e.do("GET", "/documents?documentHolder="+cid+"&limit=2", nil).JSON(t)
		if l["totalCount"] != float64(3) || len(l["data"].([]any)) != 2 || l["hasMore"] != true {
			t.Fatalf("list: %v", l)
		}
		next := e.do("GET", "/documents?documentHolder="+cid+"&limit=2&cursor="+l["nextCursor"].(string), nil).JSON(t)
		if d := next["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != ids[2] {
			t.Fatalf("page 2: %v", next)
		}
		if n := blobFiles(t, dir); n != 3 {
			t.Fatalf("%d blob files, want 3", n)
		}
		// File names never reach the logs.
		if strings.Contains(e.logs.String(), "front.jpg") {
			t.Fatal("a file name was logged")
		}
	})
}

// Refused files get a precise error and leave no row and no blob behind.
func TestDocuments_RefusedFilesLeaveNothing(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Rex Refused"))["id"].(string)
		oversize := append(append([]byte{}, testPNG...), make([]byte, 10_000_001-len(testPNG))...)
		cases := []struct {
			name       string
			data       []byte
			constraint string
		}{
			{"x.gif", testGIF, "format"},
			{"x.pdf", []byte("plain text pretending to be a PDF"), "format"},
			{"empty.png", nil, "minLength"},
			{"big.png", oversize, "maxLength"},
		}
		for _, c := range cases {
			r := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", c.name, c.data})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fe := fieldErrors(t, r); fe["file"] != c.constraint {
				t.Fatalf("%s: %v", c.name, fe)
			}
		}
		// Exactly 10,000,000 bytes is accepted.
		limit := oversize[:10_000_000]
		r := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "limit.png", limit})
		expect(t, r, http.StatusCreated, "")
		expect(t, e.do("DELETE", "/documents/"+r.JSON(t)["id"].(string), nil), http.StatusNoContent, "")

		// A good file with bad metadata: every field listed, the file discarded.
		r = e.sendForm(t, "POST", "/documents", []string{"documentHolder", cid, "documentType", "SCROLL", "side", "TOP",
			"colour", "red"}, []formFile{{"file", "p.png", testPNG}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		fe := fieldErrors(t, r)
		if fe["documentType"] != "enum" || fe["side"] != "enum" || fe["country"] != "required" || fe["colour"] != "additionalProperties" {
			t.Fatalf("%v", fe)
		}
		// Two files, or none.
		r = e.sendForm(t, "POST", "/documents", []string{"documentHolder", cid, "documentType", "PASSPORT", "country", "US"},
			[]formFile{{"file", "a.png", testPNG}, {"file", "b.png", testPNG}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["file"] != "maxItems" {
			t.Fatalf("%s", r.Body)
		}
		r = e.sendForm(t, "POST", "/documents", []string{"documentHolder", cid, "documentType", "PASSPORT", "country", "US"}, nil)
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["file"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		// Not multipart at all: the wrong media type, as on JSON routes.
		expect(t, e.do("POST", "/documents", cobj{"documentHolder": cid}), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		// A file that also makes the body longer than the route's limit is
		// the same 400 as any file over 10,000,000 bytes, not a 413.
		huge := make([]byte, documentMaxBody+1)
		copy(huge, testPNG)
		r = e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "huge.png", huge})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["file"] != "maxLength" {
			t.Fatalf("%s", r.Body)
		}
		// An unknown holder, with a good file.
		expect(t, e.uploadDoc(t, "Customer:0195a2f5-b3e7-7d02-8000-000000000009", "PASSPORT", "", formFile{"file", "p.png", testPNG}),
			http.StatusNotFound, "DOCUMENT_HOLDER_NOT_FOUND")

		if n := e.documentRows(t); n != 1 { // the 10,000,000-byte one, deleted
			t.Fatalf("%d document rows", n)
		}
		if n := blobFiles(t, dir); n != 0 {
			t.Fatalf("%d blob files left behind", n)
		}
		if withFile, trashed, err := e.db.Read().DocumentBlobCounts(context.Background()); err != nil || withFile+trashed != 0 {
			t.Fatalf("rows pointing at files: %d, trashed: %d, %v", withFile, trashed, err)
		}
	})
}

// R-ERR-18: a second document of the same kind is 409
// DOCUMENT_ALREADY_EXISTS; PUT replaces the first.
func TestDocuments_AlreadyExistsThenReplace_R_ERR_18(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Ria Replace"))["id"].(string)
		first := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG})
		expect(t, first, http.StatusCreated, "")
		docID := first.JSON(t)["id"].(string)
		r := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "again.pdf", testPDF})
		expect(t, r, http.StatusConflict, "DOCUMENT_ALREADY_EXISTS")
		if d := r.JSON(t)["details"].(map[string]any); d["documentId"] != docID {
			t.Fatalf("details: %v", d)
		}
		// Another side, or another type, is another document.
		expect(t, e.uploadDoc(t, cid, "DRIVERS_LICENSE", "FRONT", formFile{"file", "f.jpg", testJPEG}), http.StatusCreated, "")
		back := e.uploadDoc(t, cid, "DRIVERS_LICENSE", "BACK", formFile{"file", "b.jpg", testJPEG})
		expect(t, back, http.StatusCreated, "")
		if n := blobFiles(t, dir); n != 3 {
			t.Fatalf("%d blob files", n)
		}

		r = e.sendForm(t, "PUT", "/documents/"+docID, []string{"documentNumber", "X1234567", "issuedOn", "2024-02-01"},
			[]formFile{{"file", "new.pdf", testPDF}})
		expect(t, r, http.StatusOK, "")
		d := r.JSON(t)
		if d["id"] != docID || d["contentType"] != "application/pdf" || d["fileName"] != "new.pdf" ||
			d["documentNumber"] != "X1234567" || d["issuedOn"] != "2024-02-01" || d["documentType"] != "PASSPORT" {
			t.Fatalf("%v", d)
		}
		if n := blobFiles(t, dir); n != 3 {
			t.Fatalf("the replaced file must be removed: %d blob files", n)
		}
		// Moving the back onto the front's kind collides.
		backID := back.JSON(t)["id"].(string)
		r = e.sendForm(t, "PUT", "/documents/"+backID, []string{"side", "FRONT"}, []formFile{{"file", "b.png", testPNG}})
		expect(t, r, http.StatusConflict, "DOCUMENT_ALREADY_EXISTS")
		// PUT needs a file, and a bad one is refused with nothing changed.
		r = e.sendForm(t, "PUT", "/documents/"+backID, []string{"side", "FRONT"}, nil)
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["file"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.sendForm(t, "PUT", "/documents/"+backID, nil, []formFile{{"file", "x.gif", testGIF}}), http.StatusBadRequest, "INVALID_INPUT")
		// A file past the body limit: 400 on `file`, as on POST.
		huge := make([]byte, documentMaxBody+1)
		copy(huge, testJPEG)
		r = e.sendForm(t, "PUT", "/documents/"+backID, nil, []formFile{{"file", "huge.jpg", huge}})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["file"] != "maxLength" {
			t.Fatalf("%s", r.Body)
		}
		if got := e.do("GET", "/documents/"+backID, nil).JSON(t); got["contentType"] != "image/jpeg" || got["side"] != "BACK" {
			t.Fatalf("refused replacements changed the document: %v", got)
		}
		if n := blobFiles(t, dir); n != 3 {
			t.Fatalf("%d blob files", n)
		}
		expect(t, e.sendForm(t, "PUT", "/documents/Document:0195a2f5-b3e7-7d02-8000-000000000009", nil,
			[]formFile{{"file", "p.png", testPNG}}), http.StatusNotFound, "NOT_FOUND")

		// Delete: the document and its file go; the kind is free again.
		expect(t, e.do("DELETE", "/documents/"+docID, nil), http.StatusNoContent, "")
		expect(t, e.do("GET", "/documents/"+docID, nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("DELETE", "/documents/"+docID, nil), http.StatusNotFound, "NOT_FOUND")
		if n := blobFiles(t, dir); n != 2 {
			t.Fatalf("%d blob files after delete", n)
		}
		expect(t, e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG}), http.StatusCreated, "")
	})
}

// Holders are the tenant's customers and beneficial owners; anything else
// is 404 DOCUMENT_HOLDER_NOT_FOUND.
func TestDocuments_HolderNotFound(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		biz := e.custCreate(t, custBusiness("REG-1"))["id"].(string)
		owner := e.custCreateOwner(t, custOwner(biz, "Owner", 50, "UBO"))["id"].(string)
		expect(t, e.uploadDoc(t, owner, "PASSPORT", "", formFile{"file", "o.png", testPNG}), http.StatusCreated, "")
		expect(t, e.uploadDoc(t, biz, "CERTIFICATE_OF_INCORPORATION", "", formFile{"file", "c.pdf", testPDF}), http.StatusCreated, "")
		for _, holder := range []string{"Customer:0195a2f5-b3e7-7d02-8000-000000000001",
			"BeneficialOwner:0195a2f5-b3e7-7d02-8000-000000000001", "Token:whatever"} {
			expect(t, e.uploadDoc(t, holder, "PASSPORT", "", formFile{"file", "p.png", testPNG}), http.StatusNotFound, "DOCUMENT_HOLDER_NOT_FOUND")
		}
		// Another environment's customer is not a holder either.
		expect(t, e.uploadDoc(t, biz, "UTILITY_BILL", "", formFile{"file", "u.pdf", testPDF}, withCreds(e.production)),
			http.StatusNotFound, "DOCUMENT_HOLDER_NOT_FOUND")
	})
}

// Tenancy: another environment's document does not exist for the caller.
func TestDocuments_Tenancy(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		cid := e.custCreate(t, custIndividual("Tia Tenant"))["id"].(string)
		docID := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG}).JSON(t)["id"].(string)
		prod := withCreds(e.production)
		expect(t, e.do("GET", "/documents/"+docID, nil, prod), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("DELETE", "/documents/"+docID, nil, prod), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.sendForm(t, "PUT", "/documents/"+docID, nil, []formFile{{"file", "p.png", testPNG}}, prod), http.StatusNotFound, "NOT_FOUND")
		if l := e.do("GET", "/documents", nil, prod).JSON(t); l["totalCount"] != float64(0) {
			t.Fatalf("%v", l)
		}
		expect(t, e.do("GET", "/documents/"+docID, nil), http.StatusOK, "")
		// A deleted customer's documents go with it.
		gone := e.custCreate(t, custIndividual("Gus Gone"))["id"].(string)
		goneDoc := e.uploadDoc(t, gone, "PASSPORT", "", formFile{"file", "p.png", testPNG}).JSON(t)["id"].(string)
		expect(t, e.do("DELETE", "/customers/"+gone, nil), http.StatusOK, "")
		expect(t, e.do("GET", "/documents/"+goneDoc, nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("DELETE", "/documents/"+goneDoc, nil), http.StatusNotFound, "NOT_FOUND")
		if l := e.do("GET", "/documents", nil).JSON(t); l["totalCount"] != float64(1) {
			t.Fatalf("%v", l)
		}
		// Without credentials nothing is served.
		expect(t, e.do("DELETE", "/documents/"+docID, nil, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}

// R-SBX-10, R-SBX-05..07: the verification reads uploaded documents. A
// customer whose packet lacks only the identity document reaches its suffix
// outcome once the document is uploaded.
func TestDocuments_VerificationSeesUploads_R_SBX_10(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		for name, want := range map[string]string{"Uma Upload 002": "REJECTED", "Uma Upload 001": "PENDING", "Uma Upload": "APPROVED"} {
			cid := e.custCreate(t, custIndividual(name))["id"].(string)
			v := e.custSubmit(t, cid).JSON(t)
			if v["verificationStatus"] != "RESOLVE_ERRORS" || custJoin(custErrorTypes(v)) != "MISSING_IDENTITY_DOCUMENT" {
				t.Fatalf("%s before: %v", name, v)
			}
			expect(t, e.uploadDoc(t, cid, "NATIONAL_ID", "", formFile{"file", "id.jpg", testJPEG}), http.StatusCreated, "")
			expect(t, e.custSubmit(t, cid), http.StatusOK, "")
			if got := e.custStatus(t, cid); got != want {
				t.Fatalf("%s after upload: %s, want %s", name, got, want)
			}
		}
	})
}

// Deleting a beneficial owner deletes its documents (R-CUST-37); the sweep
// then removes their files.
func TestDocuments_SweepRemovesFilesOfDeletedOwners(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		e.driveByHand() // sweeps by hand, expecting to find the work undone
		biz := e.custCreate(t, custBusiness("REG-2"))["id"].(string)
		owner := e.custCreateOwner(t, custOwner(biz, "Gone", 30, "UBO"))["id"].(string)
		expect(t, e.uploadDoc(t, owner, "PASSPORT", "", formFile{"file", "o.png", testPNG}), http.StatusCreated, "")
		expect(t, e.do("DELETE", "/beneficial-owners/"+owner, nil), http.StatusNoContent, "")
		if n := blobFiles(t, dir); n != 1 {
			t.Fatalf("%d blob files", n)
		}
		parts, err := e.srv.fileParts()
		if err != nil {
			t.Fatal(err)
		}
		if n, err := parts.docs.Sweep(context.Background()); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if n := blobFiles(t, dir); n != 0 {
			t.Fatalf("%d blob files after the sweep", n)
		}
	})
}

// R-ERR-10: the document-rejection codes are 400s. In sandbox a
// documentNumber naming one of them gets that refusal, and nothing is kept.
func TestDocuments_SandboxRejectionCodes_R_ERR_10(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Rob Reject"))["id"].(string)
		for _, code := range []string{"LOW_QUALITY", "DATA_MISMATCH", "EXPIRED", "SUSPECTED_FRAUD", "UNSUITABLE_DOCUMENT", "INCOMPLETE"} {
			r := e.sendForm(t, "POST", "/documents", []string{"documentHolder", cid, "documentType", "PASSPORT", "country", "US",
				"documentNumber", code}, []formFile{{"file", "p.png", testPNG}})
			expect(t, r, http.StatusBadRequest, code)
		}
		doc := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG}).JSON(t)["id"].(string)
		r := e.sendForm(t, "PUT", "/documents/"+doc, []string{"documentNumber", "LOW_QUALITY"}, []formFile{{"file", "q.png", testPNG}})
		expect(t, r, http.StatusBadRequest, "LOW_QUALITY")
		if n := blobFiles(t, dir); n != 1 {
			t.Fatalf("%d blob files", n)
		}
		if got := e.do("GET", "/documents/"+doc, nil).JSON(t); got["documentNumber"] != nil {
			t.Fatalf("a refused replacement changed the document: %v", got)
		}
		// Production has no such magic.
		prod := withCreds(e.production)
		r = e.do("POST", "/customers", custIndividual("Pro Duction"), prod)
		expect(t, r, http.StatusCreated, "")
		r = e.sendForm(t, "POST", "/documents", []string{"documentHolder", r.JSON(t)["id"].(string), "documentType", "PASSPORT",
			"country", "US", "documentNumber", "LOW_QUALITY"}, []formFile{{"file", "p.png", testPNG}}, prod)
		expect(t, r, http.StatusCreated, "")
	})
}

// While a manual review of the customer is in progress, its documents can
// be neither replaced nor deleted.
func TestDocuments_LockedDuringReview(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		cid := e.custCreate(t, custIndividual("Rev Review 001"))["id"].(string)
		doc := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG}).JSON(t)["id"].(string)
		if v := e.custSubmit(t, cid).JSON(t); v["verificationStatus"] != "PENDING_MANUAL_REVIEW" {
			t.Fatalf("%v", v)
		}
		expect(t, e.sendForm(t, "PUT", "/documents/"+doc, nil, []formFile{{"file", "p.png", testPNG}}), http.StatusConflict, "CONFLICT")
		expect(t, e.do("DELETE", "/documents/"+doc, nil), http.StatusConflict, "CONFLICT")
		expect(t, e.do("GET", "/documents/"+doc, nil), http.StatusOK, "")
	})
}
