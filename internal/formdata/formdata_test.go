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

func fieldOf(t *testing.T, err error) (status int, field, constraint string) {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok {
		t.Fatalf("not an API error: %v", err)
	}
	fe, _ := e.Details["errors"].([]apierr.FieldError)
	if len(fe) == 0 {
		t.Fatalf("no field errors: %v", err)
	}
	return e.Status, fe[0].Field, fe[0].Constraint
}

// MediaType: another type or none is 415 on Content-Type; multipart
// without a boundary is 400.
func TestMediaType(t *testing.T) {
	if b, err := MediaType("multipart/form-data; boundary=xy", "file"); err != nil || b != "xy" {
		t.Fatalf("%q %v", b, err)
	}
	for _, ct := range []string{"application/json", "text/csv", "", "multipart/mixed; boundary=xy", "%%%"} {
		_, err := MediaType(ct, "file")
		if s, f, c := fieldOf(t, err); s != 415 || f != "Content-Type" || c != apierr.Enum {
			t.Errorf("%q: %d %s %s", ct, s, f, c)
		}
	}
	_, err := MediaType("multipart/form-data", "file")
	if s, f, c := fieldOf(t, err); s != 400 || f != "Content-Type" || c != apierr.Format {
		t.Errorf("no boundary: %d %s %s", s, f, c)
	}
}

// ExplainOversized names the file when the file is what is too long, and
// another part or the body otherwise.
func TestExplainOversized(t *testing.T) {
	l := Limits{FileField: "file", MinFile: 1, MaxFile: 10, MaxText: 5, MaxBody: 40}
	ct := "multipart/form-data; boundary=b"
	part := func(name, value string) string {
		return "--b\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n"
	}
	cases := []struct{ body, field string }{
		{part("file", strings.Repeat("x", 11)), "file"},
		{part("note", strings.Repeat("x", 6)), "note"},
		{part("note", "ok") + "--b\r\nContent-Dispo", BodyField},
	}
	for _, c := range cases {
		if s, f, con := fieldOf(t, ExplainOversized(ct, []byte(c.body), l)); s != 400 || f != c.field || con != apierr.MaxLength {
			t.Errorf("%q: %d %s %s, want %s", c.body, s, f, con, c.field)
		}
	}
	if s, _, _ := fieldOf(t, ExplainOversized("application/json", []byte("{}"), l)); s != 415 {
		t.Errorf("JSON: %d", s)
	}
}

// FuzzExplainOversized: any prefix is explained by an API error, never a
// panic or a plain error.
func FuzzExplainOversized(f *testing.F) {
	f.Add("multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nxxxxxxxxxxxxxxx")
	f.Add("multipart/form-data; boundary=b", "--b\r\nContent-Dispo")
	f.Add("application/json", "{}")
	f.Fuzz(func(t *testing.T, ct, prefix string) {
		err := ExplainOversized(ct, []byte(prefix), Limits{FileField: "file", MinFile: 1, MaxFile: 10, MaxText: 5, MaxBody: 64})
		if _, ok := apierr.From(err); !ok {
			t.Fatalf("%q %q: %v", ct, prefix, err)
		}
	})
}
