package formdata

import (
	"io"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// readAll reads every part of body to the end, as an upload route does.
func readAll(body string) error {
	mr := NewReader(strings.NewReader(body), "b")
	for {
		p, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // NextPart's end of form
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, p); err != nil {
			return err
		}
	}
}

// R-ERR-01: a body cut short is INVALID_INPUT naming the part being read,
// not the end of the form (multipart wraps io.EOF in "NextPart: EOF") and
// not an io.ErrUnexpectedEOF that would become a 500.
func TestTruncatedBodiesAreInvalidInput(t *testing.T) {
	const head = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n"
	for name, body := range map[string]string{
		"inside the content": head + "a,b,c",
		"inside the header":  "--b\r\nContent-Disposition: form-da",
		"after the boundary": "--b\r\n",
		"empty":              "",
	} {
		err := readAll(body)
		e, ok := apierr.From(err)
		if !ok || e.Code != apierr.CodeInvalidInput || len(apierr.FieldList(err)) != 1 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := readAll(head + "a,b,c\r\n--b--\r\n"); err != nil {
		t.Fatalf("a complete form: %v", err)
	}
	if f := apierr.FieldList(readAll(head + "a,b,c")); f[0].Field != "file" {
		t.Fatalf("the part being read is named: %v", f)
	}
}

// FuzzReader: whatever the body, reading every part to the end never
// panics and fails only with 400 INVALID_INPUT naming a part.
func FuzzReader(f *testing.F) {
	const head = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n"
	for _, seed := range []string{"", "--b--", "--b\r\n", head + "x\r\n--b--\r\n", head + "x", "--b\r\nContent-Disposition: form-da",
		"preamble\r\n--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n--b--",
		"--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ\r\n--b--", "--b\r\n\r\n\r\n--b--epilogue"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		err := readAll(body)
		if err == nil {
			return
		}
		if e, ok := apierr.From(err); !ok || e.Code != apierr.CodeInvalidInput || e.Status != 400 || len(apierr.FieldList(err)) == 0 {
			t.Fatalf("not a 400 INVALID_INPUT naming a part: %v", err)
		}
	})
}
