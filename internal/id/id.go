// Package id makes and checks resource identifiers of the form
// "<Type>:<uuid>" (R-CONV-01). UUIDv7 makes ids sort by creation time, which
// is what keyset pagination orders by.
package id

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Resource type prefixes (R-CONV-02) used by this code base.
const (
	Platform       = "Platform"
	PlatformConfig = "PlatformConfig"
	Token          = "Token"
)

// New returns a fresh "<typ>:<uuidv7>".
func New(typ string) string {
	u, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system random source does; nothing
		// sensible can continue without randomness.
		panic("id: " + err.Error())
	}
	return typ + ":" + u.String()
}

// Valid reports whether s is "<typ>:<uuid>" with a canonical lowercase UUID.
func Valid(typ, s string) bool {
	rest, ok := strings.CutPrefix(s, typ+":")
	if !ok || len(rest) != 36 {
		return false
	}
	u, err := uuid.Parse(rest)
	return err == nil && u.String() == rest
}

// Event ids; other capabilities declare their prefixes in files of their own
// in this package.
const Event = "Event"

// Floor is the smallest id of type typ that New can return at or after at:
// UUIDv7 ids sort by their creation millisecond, so `id >= Floor(typ, t)`
// selects, through an id index, every id made from t on.
func Floor(typ string, at time.Time) string {
	ms := uint64(max(at.UnixMilli(), 0)) & (1<<48 - 1)
	return fmt.Sprintf("%s:%08x-%04x-7000-0000-000000000000", typ, ms>>16, ms&0xffff)
}
