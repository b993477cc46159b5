package webhooks

import (
	"slices"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// The recorder ends a journal row with the batch that writes the last
// outcome it expects of it, not before; a row whose outcomes never all come
// (an attempt dropped) is forgotten once its lease has ended, and left to
// expire in the database.
func TestRecorder_EndsAJournalWithItsLastOutcome(t *testing.T) {
	rec := newRecorder(nil, nil, DefaultBackoff)
	until := time.Now().Add(time.Minute)
	claim := func(event, journal string) store.Claim {
		return store.Claim{Delivery: store.Delivery{EventID: event, LeaseUntil: &until, Journal: journal}}
	}
	a1, a2, b1 := claim("a1", "A"), claim("a2", "A"), claim("b1", "B")
	rec.expect([]store.Claim{a1, a2, b1, claim("rowed", "")})
	first := []finished{{claim: a1}, {claim: b1}}
	if got := rec.ending(first); !slices.Equal(got, []string{"B"}) {
		t.Fatalf("ending %v, want [B]", got)
	}
	rec.written(first, time.Now())
	second := []finished{{claim: a2}}
	if got := rec.ending(second); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("ending %v, want [A]", got)
	}
	rec.written(second, time.Now())
	if len(rec.journals) != 0 {
		t.Fatalf("journals left %v", rec.journals)
	}
	// One of C's two outcomes never comes: C is never ended, and its count
	// goes once its lease is over.
	c1 := claim("c1", "C")
	rec.expect([]store.Claim{c1, claim("c2", "C")})
	if got := rec.ending([]finished{{claim: c1}}); len(got) != 0 {
		t.Fatalf("ending %v before the last outcome", got)
	}
	rec.written([]finished{{claim: c1}}, until.Add(time.Second))
	if len(rec.journals) != 0 {
		t.Fatalf("a journal past its lease kept: %v", rec.journals)
	}
}
