package paymentdocs

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/formdata"
)

// FuzzParseUpload: whatever the form (seeded with valid, truncated and
// malformed bodies), ParseUpload and ParseOversizedUpload never panic and
// fail only with 400 INVALID_INPUT listing fields; an accepted upload obeys
// R-PDOC-03 and R-PDOC-04 (a known format, 1 to 8,000,000 bytes).
func FuzzParseUpload(f *testing.F) {
	ct, valid := form(f, field("documentType", "INVOICE"), file("i.pdf", pdfBytes))
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(valid[:len(valid)-8])
	_, two := form(f, file("a.pdf", pdfBytes), file("b.pdf", pdfBytes), field("documentType", "X"), field("customerId", ""))
	f.Add(two)
	_, odd := form(f, fileAs("", pdfBytes), field("documentType", "INVOICE"), field("documentType", "CONTRACT"))
	f.Add(odd)
	f.Add([]byte(""))
	f.Add([]byte("--" + boundaryOf(f, ct) + "\r\nContent-Disposition: form-da"))
	f.Fuzz(func(t *testing.T, body []byte) {
		u, err := ParseUpload(ct, body)
		if err == nil {
			if u.ContentType == "" || len(u.Data) < MinFileBytes || len(u.Data) > MaxFileBytes || u.DocumentType == "" {
				t.Fatalf("accepted %+v", u)
			}
		} else if e, ok := apierr.From(err); !ok || e.Status != 400 || e.Code != apierr.CodeInvalidInput || len(apierr.FieldList(err)) == 0 {
			t.Fatalf("ParseUpload: not a 400 INVALID_INPUT listing fields: %v", err)
		}
		err = ParseOversizedUpload(ct, body)
		if e, ok := apierr.From(err); !ok || e.Status != 400 || e.Code != apierr.CodeInvalidInput || len(apierr.FieldList(err)) == 0 {
			t.Fatalf("ParseOversizedUpload: not a 400 INVALID_INPUT listing fields: %v", err)
		}
	})
}

func boundaryOf(t testing.TB, ct string) string {
	b, ok := formdata.Boundary(ct)
	if !ok {
		t.Fatalf("no boundary in %q", ct)
	}
	return b
}
