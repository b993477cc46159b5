package jsonx

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// strictCases are bodies encoding/json accepts but a strict reader refuses,
// with the field each must name (also the fuzz seeds).
var strictCases = []struct {
	body, field string
}{
	{`{"name":"a","name":"b"}`, "name"},
	{`{"inner":{"amount":1,"amount":2}}`, "inner.amount"},
	{`{"list":[{"amount":1},{"amount":1,"amount":2}]}`, "list[1].amount"},
	{`{"extra":{"x":1,"x":2}}`, "extra.x"},
	{"{\"name\":\"caf\xe9\"}", "name"},
	{"{\"tags\":[\"ok\",\"\xff\"]}", "tags[1]"},
	{"{\"na\xffme\":\"x\"}", "na\ufffdme"},
	{`{"name":"\ud800"}`, "name"},
	{`{"name":"x\udc00y"}`, "name"},
	{`{"name":"\ud800\u0041"}`, "name"},
	{`{"inner":{"amount":1},"tags":["\udbff"]}`, "tags[0]"},
	{`{"name":"a\u0000b"}`, "name"},
}

// R-ERR-02: duplicate keys at any depth, invalid UTF-8, lone surrogate and
// NUL escapes are refused, not silently resolved (last key wins, U+FFFD), each
// listed in details.errors[] with its path.
func TestDecode_Strict_R_ERR_02(t *testing.T) {
	for _, c := range strictCases {
		var s sample
		err := Decode([]byte(c.body), &s)
		if e, ok := apierr.From(err); !ok || e.Code != apierr.CodeInvalidInput {
			t.Errorf("%q: %v", c.body, err)
			continue
		}
		if got := fields(t, err)[c.field]; got != apierr.Format && got != apierr.AdditionalProperties {
			t.Errorf("%q: %s not named: %v", c.body, c.field, apierr.FieldList(err))
		}
	}
	// Valid surrogate pairs, escaped backslashes and repeated keys in
	// different objects are fine.
	for _, ok := range []string{`{"name":"\ud83d\ude00"}`, `{"name":"\\ud800"}`, `{"name":"\\u0000"}`, `{"list":[{"amount":1},{"amount":2}],"inner":{"amount":3}}`,
		`{"name":"café ✓"}`} {
		var s sample
		if err := Decode([]byte(ok), &s); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
