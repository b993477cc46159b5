package accounts

import (
	"testing"
	"time"
)

// FuzzParseCursor: the statement cursor a signed page cursor carries never
// panics on any input, and what it accepts formats back to the same
// position (an instant in µs and a posting id).
func FuzzParseCursor(f *testing.F) {
	for _, seed := range []string{FormatCursor(StatementCursor{CreatedAt: time.UnixMicro(1760347800000000).UTC(), ID: "Posting:1"}),
		"", "|", "1|", "|x", "-9223372036854775808|a|b", "9223372036854775808|x", "0x10|a", "+5|a"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseCursor(s)
		if !ok {
			return
		}
		again, ok := ParseCursor(FormatCursor(c))
		if !ok || !again.CreatedAt.Equal(c.CreatedAt) || again.ID != c.ID || c.ID == "" {
			t.Fatalf("%q parsed to %+v, which does not round-trip (%+v)", s, c, again)
		}
	})
}
