// Package id makes and checks resource identifiers of the form
// "<Type>:<uuid>" (R-CONV-01). UUIDv7 makes ids sort by creation time, which
// is what keyset pagination orders by.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
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

// At returns a fresh "<typ>:<uuidv7>" stamped with at rather than with the
// clock: at's millisecond in its first 48 bits, the fraction of that
// millisecond in the next 12 (1/4096 ms), 62 random bits after. A resource
// whose id and created_at come from one reading of its store's clock has an
// id within a known distance of its created_at (below), so a list filtered
// by creation time can bound its id range (Window) and read only the window
// through an id index.
//
// Ids of one process follow each other as at does; one that would share
// the last one's fraction, or come less than atReorder before it (two
// goroutines' clock readings reaching At out of order), takes the fraction
// after the last one instead, as New's do. That can put an id ahead of its
// at, by less than atReorder and a burst's fractions (4,096 ids a
// millisecond), never behind it. A time further back (a test's clock set
// back) is taken as it is.
func At(typ string, at time.Time) string {
	ns := max(at.UnixNano(), 0)
	v := uint64(ns/1e6)&(1<<48-1)<<12 | uint64(ns%1e6)*4096/1e6
	for {
		last := lastAt.Load()
		next := v
		if v <= last && last-v < atReorder {
			next = last + 1
		}
		if lastAt.CompareAndSwap(last, next) {
			v = next
			break
		}
	}
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[:8], v>>12<<16|0x7000|v&0x0fff)
	rand.Read(u[8:]) // never fails: crypto/rand crashes the program first
	u[8] = 0x80 | u[8]&0x3f
	return typ + ":" + u.String()
}

// lastAt is the last At value (millisecond << 12 | fraction).
var lastAt atomic.Uint64

// atReorder is how far back (in 1/4096 ms) At takes a time as out of order.
const atReorder = 100 * 4096

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

// WindowSlack bounds how far an id may stand from its resource's
// created_at: ten times what At may put it ahead, and for ids New made just
// before their resource read the clock (events before At), microseconds in
// practice.
const WindowSlack = time.Second

// Window is the id range [lo, hi) that holds every id of type typ whose
// resource was created within [from, to] (either end nil: unbounded, ""),
// for resources whose ids come from At with their created_at, or from New
// just before it. The range is wider than the window by WindowSlack at each
// end; a query keeps its created_at conditions and adds these as bounds its
// id index can range over.
func Window(typ string, from, to *time.Time) (lo, hi string) {
	if from != nil {
		lo = Floor(typ, from.Add(-WindowSlack))
	}
	if to != nil {
		hi = Floor(typ, to.Add(WindowSlack))
	}
	return lo, hi
}
