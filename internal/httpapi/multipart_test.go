package httpapi

import (
	"bytes"
	"net/http"
	"testing"
)

// truncations cuts a well-formed multipart body at points a dropped
// connection or a buggy client produces: inside the file's content, inside
// a part's header, before the closing boundary, and right after the first
// boundary line.
func truncations(body []byte) map[string][]byte {
	cuts := map[string][]byte{}
	file := bytes.Index(body, []byte("filename="))
	cuts["inside the file"] = body[:file+(len(body)-file)/2]
	cuts["inside a part header"] = body[:file+4]
	cuts["before the closing boundary"] = body[:bytes.LastIndex(body, []byte("\r\n--"))]
	cuts["after the first boundary"] = body[:bytes.Index(body, []byte("\r\n"))+2]
	return cuts
}

// R-ERR-01: a truncated multipart upload is malformed input, 400
// INVALID_INPUT with the problem in details.errors[], never a 500, on every
// route that reads multipart/form-data; nothing is stored.
func TestMultipart_TruncatedUploadsAre400(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Tess Truncated"))["id"].(string)
		doc := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG})
		expect(t, doc, http.StatusCreated, "")
		docID := doc.JSON(t)["id"].(string)
		filesBefore, rowsBefore := blobFiles(t, dir), e.documentRows(t)

		bigPNG := append(append([]byte(nil), testPNG...), bytes.Repeat([]byte{1}, 8192)...)
		csv := []byte(bulkCSV + string(bytes.Repeat([]byte("INDIVIDUAL,,Pad Ding,1990-01-15,US,,1 Main St,Springfield,62701,US,\n"), 100)))
		forms := []struct {
			method, path string
			fields       []string
			file         formFile
		}{
			{"POST", "/documents", []string{"documentHolder", cid, "documentType", "DRIVERS_LICENSE", "country", "US", "side", "FRONT"}, formFile{"file", "d.png", bigPNG}},
			{"PUT", "/documents/" + docID, []string{"documentNumber", "X1"}, formFile{"file", "p.png", bigPNG}},
			{"POST", "/customers/bulk/csv", nil, formFile{"file", "c.csv", csv}},
			{"POST", "/customer", nil, formFile{"file", "c.csv", csv}},
			{"POST", "/payment-documents", []string{"documentType", "INVOICE"}, formFile{"file", "i.png", bigPNG}},
		}
		for _, f := range forms {
			body, ct := multipartBody(t, f.fields, f.file)
			for where, cut := range truncations(body) {
				r := e.do(f.method, f.path, cut, withHeader("Content-Type", ct))
				if r.Status != http.StatusBadRequest || r.Code(t) != "INVALID_INPUT" || len(fieldErrors(t, r)) == 0 {
					t.Errorf("%s %s cut %s: %d %s", f.method, f.path, where, r.Status, r.Body)
				}
			}
		}
		if got := blobFiles(t, dir); got != filesBefore {
			t.Fatalf("refused uploads left %d blob files, had %d", got, filesBefore)
		}
		if got := e.documentRows(t); got != rowsBefore {
			t.Fatalf("refused uploads changed documents: %d rows, had %d", got, rowsBefore)
		}
		if got := e.do("GET", "/documents/"+docID, nil).JSON(t); got["contentType"] != "image/png" || got["documentNumber"] != nil {
			t.Fatalf("a refused replacement changed the document: %v", got)
		}
	})
}

// The hosted KYC form reads its upload through the same reader: a
// truncated submission is a 400 page, not a 500, and keeps nothing.
func TestMultipart_TruncatedKycFormIs400(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Kit Truncated"))["id"].(string)
		token, _ := e.kycLink(t, cid)
		nonce := pageNonce(t, e.kycPage(t, "GET", token, nil, ""))
		bigPNG := append(append([]byte(nil), testPNG...), bytes.Repeat([]byte{1}, 8192)...)
		body, ct := multipartBody(t, individualForm(nonce, "Kit Truncated"), formFile{"file", "p.png", bigPNG})
		for where, cut := range truncations(body) {
			if r := e.kycPage(t, "POST", token, cut, ct); r.Status != http.StatusBadRequest {
				t.Errorf("cut %s: %d %s", where, r.Status, r.Body)
			}
		}
		if n := blobFiles(t, dir); n != 0 || e.documentRows(t) != 0 || e.custStatus(t, cid) != "UNVERIFIED" {
			t.Fatalf("a truncated form changed something: %d files", n)
		}
	})
}

// A body that is not multipart/form-data — JSON, CSV, none — sent to a
// route that reads multipart/form-data is 415 UNSUPPORTED_MEDIA_TYPE naming
// Content-Type, as a JSON route answers a body of the wrong type (R-CONV-09);
// multipart/form-data without a boundary is a malformed body, 400.
func TestMultipart_WrongMediaTypeIs415(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Mia Media"))["id"].(string)
		doc := e.uploadDoc(t, cid, "PASSPORT", "", formFile{"file", "p.png", testPNG})
		expect(t, doc, http.StatusCreated, "")
		docID := doc.JSON(t)["id"].(string)
		rowsBefore := e.documentRows(t)
		routes := [][2]string{{"POST", "/documents"}, {"PUT", "/documents/" + docID}, {"POST", "/customers/bulk/csv"},
			{"POST", "/customer"}, {"POST", "/payment-documents"}}
		for _, rt := range routes {
			for _, ct := range []string{"application/json", "text/csv", ""} {
				r := e.do(rt[0], rt[1], []byte(`{"documentHolder":"`+cid+`"}`), withHeader("Content-Type", ct))
				if r.Status != http.StatusUnsupportedMediaType || r.Code(t) != "UNSUPPORTED_MEDIA_TYPE" ||
					fieldErrors(t, r)["Content-Type"] != "enum" {
					t.Errorf("%s %s as %q: %d %s", rt[0], rt[1], ct, r.Status, r.Body)
				}
			}
			r := e.do(rt[0], rt[1], []byte("x"), withHeader("Content-Type", "multipart/form-data"))
			if r.Status != http.StatusBadRequest || fieldErrors(t, r)["Content-Type"] != "format" {
				t.Errorf("%s %s without a boundary: %d %s", rt[0], rt[1], r.Status, r.Body)
			}
		}
		if got := e.documentRows(t); got != rowsBefore {
			t.Fatalf("refused uploads changed documents: %d rows, had %d", got, rowsBefore)
		}
	})
}
