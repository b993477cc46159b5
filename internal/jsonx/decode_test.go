package jsonx

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

type inner struct {
	Amount int64 `json:"amount"`
}

type sample struct {
	Name   *string          `json:"name"`
	Count  int              `json:"count"`
	Tags   []string         `json:"tags"`
	When   *time.Time       `json:"when"`
	Inner  *inner           `json:"inner"`
	List   []inner          `json:"list"`
	Clear  Optional[string] `json:"clear"`
	Amount Optional[int64]  `json:"amt"`
}

func fields(t *testing.T, err error) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, fe := range apierr.FieldList(err) {
		out[fe.Field] = fe.Constraint
	}
	return out
}

func TestDecode_Valid(t *testing.T) {
	var s sample
	err := Decode([]byte(`{"name":"a","count":3,"tags":["x"],"when":"2025-10-13T09:30:00Z","inner":{"amount":5},"clear":null,"amt":7}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	if *s.Name != "a" || s.Count != 3 || s.Inner.Amount != 5 || !s.Clear.Set || !s.Clear.Null || s.Amount.Value != 7 || s.When.Hour() != 9 {
		t.Fatalf("%+v", s)
	}
}

func TestDecode_EmptyBodyIsZeroValue(t *testing.T) {
	var s sample
	for _, b := range []string{"", "  \n"} {
		if err := Decode([]byte(b), &s); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
	}
}

func TestDecode_OptionalOmittedVsNull(t *testing.T) {
	var a, b sample
	Decode([]byte(`{}`), &a)
	Decode([]byte(`{"clear":null}`), &b)
	if a.Clear.Set || !b.Clear.Set || !b.Clear.Null || b.Clear.Ptr() != nil {
		t.Fatalf("omitted %+v, null %+v", a.Clear, b.Clear)
	}
}

// R-ERR-02: every unknown and mistyped field is listed at once, with its path.
func TestDecode_ListsEveryInvalidField_R_ERR_02(t *testing.T) {
	var s sample
	err := Decode([]byte(`{"name":5,"count":"x","bogus":1,"inner":{"amount":1.5,"zzz":true},"list":[{"amount":"a"}],"when":"tomorrow","amt":99999999999999999999}`), &s)
	got := fields(t, err)
	want := map[string]string{
		"name": apierr.Type, "count": apierr.Type, "bogus": apierr.AdditionalProperties,
		"inner.amount": apierr.Type, "inner.zzz": apierr.AdditionalProperties, "list[0].amount": apierr.Type,
		"when": apierr.Format, "amt": apierr.Maximum,
	}
	for f, c := range want {
		if got[f] != c {
			t.Errorf("field %s: constraint %q, want %q (all: %v)", f, got[f], c, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d fields, want %d: %v", len(got), len(want), got)
	}
	if e, _ := apierr.From(err); e.Status != 400 || e.Code != "INVALID_INPUT" {
		t.Fatalf("%+v", e)
	}
}

func TestDecode_PartialKeepsValidFields(t *testing.T) {
	var s sample
	err := Decode([]byte(`{"name":"kept","bogus":1}`), &s)
	if err == nil || s.Name == nil || *s.Name != "kept" {
		t.Fatalf("valid remainder not decoded: %v %+v", err, s)
	}
}

func TestDecode_Malformed(t *testing.T) {
	for _, b := range []string{`{`, `{"a":}`, `[1]`, `"x"`, `{} {}`, `{"name":"a"} x`, "\x00"} {
		var s sample
		err := Decode([]byte(b), &s)
		e, ok := apierr.From(err)
		if !ok || e.Code != "INVALID_INPUT" || e.Status != 400 {
			t.Errorf("%q: %v", b, err)
		}
		if s.Name != nil {
			t.Errorf("%q: target modified", b)
		}
	}
}

func TestDecode_CaseSensitiveKeys(t *testing.T) {
	var s sample
	if got := fields(t, Decode([]byte(`{"NAME":"a"}`), &s)); got["NAME"] != apierr.AdditionalProperties {
		t.Fatalf("keys differing in case must be unknown: %v", got)
	}
}

// FuzzDecode: whatever the body, Decode never panics and fails only with
// 400 INVALID_INPUT; what it accepts has no repeated key, invalid UTF-8 or
// lone surrogate (checked independently by re-reading the body). Seeded
// with the strict cases of issue 16.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{}`, `{"name":"a","inner":{"amount":1}}`, `{"list":[{"amount":1},{}]}`, `{"clear":null}`, `[`, ``,
		`{"when":"2025-10-13T09:30:00Z","amt":9223372036854775808}`, `{"name":"\ud83d\ude00"}`, `{"name":"\\ud800"}`} {
		f.Add(seed)
	}
	for _, c := range strictCases {
		f.Add(c.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var s sample
		err := Decode([]byte(body), &s)
		if err != nil {
			if e, ok := apierr.From(err); !ok || e.Status != 400 || e.Code != apierr.CodeInvalidInput {
				t.Fatalf("not a 400 INVALID_INPUT: %v", err)
			}
			if strings.TrimSpace(body) == "" {
				t.Fatal("empty body must decode")
			}
			return
		}
		if !utf8.ValidString(body) {
			t.Fatalf("accepted invalid UTF-8: %q", body)
		}
		// encoding/json turns a lone surrogate into U+FFFD: an accepted
		// body has none it did not send itself.
		var generic any
		if json.Unmarshal([]byte(body), &generic) == nil && strings.ContainsRune(fmt.Sprint(generic), utf8.RuneError) &&
			!strings.ContainsRune(body, utf8.RuneError) && !strings.Contains(strings.ToLower(body), `\ufffd`) {
			t.Fatalf("accepted a replaced character: %q", body)
		}
		var f apierr.Fields
		checkStrict(&f, []byte(strings.TrimSpace(body)))
		if f.Len() > 0 {
			t.Fatalf("accepted %q: %v", body, f.Err())
		}
	})
}

// BenchmarkDecode: a quote-sized body into nested structs (go test -bench
// Decode ./internal/jsonx).
func BenchmarkDecode(b *testing.B) {
	body := []byte(`{"name":"a","count":3,"tags":["x","y"],"when":"2025-10-13T09:30:00Z","inner":{"amount":5},
		"list":[{"amount":1},{"amount":2}],"clear":null,"amt":7}`)
	for b.Loop() {
		var s sample
		if err := Decode(body, &s); err != nil {
			b.Fatal(err)
		}
	}
}
