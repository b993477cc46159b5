package paymentdocs

import (
	"bytes"
	"github.com/paymentsd/paymentsd/internal/docformat"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Small files of each format, and two that are none of them.
var (
	pdfBytes  = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	jpegBytes = append([]byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}, bytes.Repeat([]byte{7}, 32)...)
	pngBytes  = append(slicesClone(docformat.PNGSignature), bytes.Repeat([]byte{0}, 32)...)
	gifBytes  = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,")
	textBytes = []byte("just some text, not a document\n")
)

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// sizedPNG is a PNG signature padded to n bytes (n >= 8).
func sizedPNG(n int) []byte {
	b := make([]byte, n)
	copy(b, docformat.PNGSignature)
	return b
}

type part struct {
	name, fileName string
	data           []byte
	isFile         bool
}

func field(name, value string) part { return part{name: name, data: []byte(value)} }
func file(name string, data []byte) part {
	return part{name: "file", fileName: name, data: data, isFile: true}
}
func fileAs(fieldName string, d []byte) part {
	return part{name: fieldName, fileName: "x.pdf", data: d, isFile: true}
}

func form(t testing.TB, parts ...part) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.isFile {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="`+p.fileName+`"`)
			h.Set("Content-Type", "application/octet-stream")
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
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
	return w.FormDataContentType(), b.Bytes()
}

func parse(t testing.TB, parts ...part) (Upload, error) {
	t.Helper()
	ct, body := form(t, parts...)
	return ParseUpload(ct, body)
}

// R-PDOC-03: the format comes from the contents; a PDF named .png is a PDF;
// GIF and text are refused whatever their name.
func TestParseUpload_FormatFromContent_R_PDOC_03(t *testing.T) {
	ok := []struct {
		name string
		data []byte
		ct   string
	}{
		{"scan.png", pdfBytes, ContentTypePDF},
		{"photo.jpg", jpegBytes, ContentTypeJPEG},
		{"image.pdf", pngBytes, ContentTypePNG},
	}
	for _, c := range ok {
		u, err := parse(t, file(c.name, c.data), field("documentType", "INVOICE"))
		if err != nil || u.ContentType != c.ct || u.FileName != c.name || !bytes.Equal(u.Data, c.data) {
			t.Fatalf("%s: %+v %v", c.name, u.ContentType, err)
		}
	}
	for name, data := range map[string][]byte{"x.gif": gifBytes, "x.pdf": textBytes, "x.png": []byte{0x89, 'P', 'N', 'G'}} {
		_, err := parse(t, file(name, data), field("documentType", "INVOICE"))
		if f := fieldsOf(t, err); f["file"] != apierr.Format {
			t.Fatalf("%s: %v", name, f)
		}
	}
}

// R-PDOC-04: 1 to 8,000,000 bytes.
func TestParseUpload_SizeBounds_R_PDOC_04(t *testing.T) {
	cases := []struct {
		size       int
		constraint string
	}{
		{0, apierr.MinLength},
		{1, apierr.Format}, // one byte cannot be any accepted format: in range, refused for its contents
		{8, ""},
		{MaxFileBytes, ""},
		{MaxFileBytes + 1, apierr.MaxLength},
	}
	for _, c := range cases {
		data := make([]byte, c.size)
		if c.size >= 8 {
			data = sizedPNG(c.size)
		} else if c.size == 1 {
			data = []byte{'%'}
		}
		u, err := parse(t, file("f.png", data), field("documentType", "CONTRACT"))
		if c.constraint == "" {
			if err != nil || len(u.Data) != c.size {
				t.Fatalf("%d bytes: %v", c.size, err)
			}
			continue
		}
		if f := fieldsOf(t, err); f["file"] != c.constraint {
			t.Fatalf("%d bytes: %v", c.size, f)
		}
	}
	// The smallest accepted file: a 5-byte PDF header.
	if u, err := parse(t, file("tiny.pdf", []byte("%PDF-")), field("documentType", "CONTRACT")); err != nil || u.ContentType != ContentTypePDF {
		t.Fatalf("%v", err)
	}
	if MaxUploadBody <= MaxFileBytes {
		t.Fatal("the body limit must leave room for the multipart envelope")
	}
}

// R-PDOC-05: one file per request.
func TestParseUpload_OneFile_R_PDOC_05(t *testing.T) {
	_, err := parse(t, file("a.pdf", pdfBytes), file("b.pdf", pdfBytes), field("documentType", "INVOICE"))
	if f := fieldsOf(t, err); f["file"] != apierr.MaxItems {
		t.Fatalf("%v", f)
	}
}

// R-PDOC-01, R-PDOC-10: field names; documentType required and one of the
// table's types; customerId optional; every problem listed at once.
func TestParseUpload_Fields_R_PDOC_01(t *testing.T) {
	for _, typ := range DocumentTypes() {
		u, err := parse(t, file("a.pdf", pdfBytes), field("documentType", typ))
		if err != nil || u.DocumentType != typ || u.CustomerID != "" {
			t.Fatalf("%s: %+v %v", typ, u, err)
		}
	}
	u, err := parse(t, field("customerId", "Customer:abc"), field("documentType", "INVOICE"), file("a.pdf", pdfBytes))
	if err != nil || u.CustomerID != "Customer:abc" {
		t.Fatalf("%+v %v", u, err)
	}
	cases := []struct {
		parts []part
		want  map[string]string
	}{
		{[]part{field("documentType", "INVOICE")}, map[string]string{"file": apierr.Required}},
		{[]part{file("a.pdf", pdfBytes)}, map[string]string{"documentType": apierr.Required}},
		{[]part{file("a.pdf", pdfBytes), field("documentType", "PASSPORT")}, map[string]string{"documentType": apierr.Enum}},
		{[]part{file("a.pdf", pdfBytes), field("documentType", "INVOICE"), field("documentType", "INVOICE")},
			map[string]string{"documentType": apierr.MaxItems}},
		{[]part{file("a.pdf", pdfBytes), field("documentType", strings.Repeat("X", 2000))}, map[string]string{"documentType": apierr.MaxLength}},
		{[]part{file("a.pdf", pdfBytes), field("documentType", "INVOICE"), field("note", "x")},
			map[string]string{"note": apierr.AdditionalProperties}},
		{[]part{fileAs("document", pdfBytes), field("documentType", "INVOICE")},
			map[string]string{"document": apierr.AdditionalProperties, "file": apierr.Required}},
		{[]part{file("a.gif", gifBytes), field("documentType", "nope")},
			map[string]string{"file": apierr.Format, "documentType": apierr.Enum}},
	}
	for i, c := range cases {
		_, err := parse(t, c.parts...)
		got := fieldsOf(t, err)
		for k, v := range c.want {
			if got[k] != v {
				t.Fatalf("case %d: %v, want %v", i, got, c.want)
			}
		}
		if len(got) != len(c.want) {
			t.Fatalf("case %d: %v, want %v", i, got, c.want)
		}
	}
	// Not multipart at all: 415, naming Content-Type.
	_, err = ParseUpload("application/json", []byte(`{}`))
	if e, ok := apierr.From(err); !ok || e.Status != http.StatusUnsupportedMediaType || e.Code != apierr.CodeUnsupportedMedia {
		t.Fatalf("JSON body: %v", err)
	}
	// A broken multipart body.
	ct, body := form(t, file("a.pdf", pdfBytes), field("documentType", "INVOICE"))
	if f := fieldsOf(t, func() error { _, err := ParseUpload(ct, body[:len(body)/2]); return err }()); f["file"] == "" {
		t.Fatalf("%v", f)
	}
}

// R-PDOC-06: fileName is the sent name, reduced to its last path element.
func TestParseUpload_FileName_R_PDOC_06(t *testing.T) {
	cases := map[string]string{
		"invoice 2025.pdf":       "invoice 2025.pdf",
		"../../etc/passwd.pdf":   "passwd.pdf",
		`C:\Users\me\scan.pdf`:   "scan.pdf",
		"":                       "document.pdf",
		strings.Repeat("é", 300): strings.Repeat("é", 255),
	}
	for in, want := range cases {
		u, err := parse(t, file(in, pdfBytes), field("documentType", "INVOICE"))
		if err != nil || u.FileName != want {
			t.Fatalf("%q: %q %v", in, u.FileName, err)
		}
	}
}

// R-PDOC-04: a body longer than MaxUploadBody, seen through its first
// MaxUploadBody bytes, is still a file over the limit (400 INVALID_INPUT,
// maxLength on file), or names the other part that makes it too long.
func TestParseOversizedUpload_R_PDOC_04(t *testing.T) {
	for _, tc := range []struct {
		parts []string // name, value pairs
		field string
	}{
		{[]string{"documentType", "INVOICE", "file", string(make([]byte, 2*MaxUploadBody))}, "file"},
		{[]string{"file", "%PDF-", "notes", string(make([]byte, 2*MaxUploadBody))}, "notes"},
	} {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for i := 0; i < len(tc.parts); i += 2 {
			_ = w.WriteField(tc.parts[i], tc.parts[i+1])
		}
		_ = w.Close()
		err := ParseOversizedUpload(w.FormDataContentType(), b.Bytes()[:MaxUploadBody])
		if f := fieldsOf(t, err); f[tc.field] != apierr.MaxLength || len(f) != 1 {
			t.Fatalf("%s: %v", tc.field, err)
		}
	}
}
