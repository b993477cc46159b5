package page

import (
	"net/url"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// FuzzParse feeds arbitrary limit and cursor values to a list's parser: it
// fails only with 400 INVALID_INPUT naming them, accepts only limits of 1
// to MaxLimit and only cursors it issued for the same scope.
func FuzzParse(f *testing.F) {
	c := NewCodec([]byte("fuzz-secret"))
	issued := c.seal("Token:0195a2f5", "tokens")
	for _, seed := range [][2]string{{"20", issued}, {"0", ""}, {"101", "x"}, {"1e3", issued + "x"}, {"-1", "%%"},
		{"", c.seal("Token:x", "customers")}, {"99999999999999999999", "."}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, limit, cursor string) {
		q := url.Values{"limit": {limit}, "cursor": {cursor}}
		r, err := c.Parse(q, "tokens")
		if err != nil {
			if e, ok := apierr.From(err); !ok || e.Status != 400 || e.Code != apierr.CodeInvalidInput || len(apierr.FieldList(err)) == 0 {
				t.Fatalf("not a 400 INVALID_INPUT listing fields: %v", err)
			}
			return
		}
		if r.Limit < 1 || r.Limit > MaxLimit {
			t.Fatalf("accepted limit %d", r.Limit)
		}
		// The only cursor issued for this scope continues after
		// Token:0195a2f5; anything else accepted would be forged.
		if cursor != "" && r.After != "Token:0195a2f5" {
			t.Fatalf("accepted cursor %q: after %q", cursor, r.After)
		}
	})
}
