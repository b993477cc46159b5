package invitations

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// The transition table, walked row by row: from PENDING both actions move;
// from every other status both are refused with the status's code
// (R-INV-02, R-INV-03, R-INV-06, R-INV-07).
func TestTransitions(t *testing.T) {
	want := map[string]map[string]string{
		Pending:   {ActClaim: Claimed, ActCancel: Cancelled},
		Claimed:   {ActClaim: "INVITATION_ALREADY_CLAIMED", ActCancel: "INVITATION_ALREADY_CLAIMED"},
		Cancelled: {ActClaim: "INVITATION_CANCELLED", ActCancel: "INVITATION_CANCELLED"},
		Expired:   {ActClaim: "INVALID_INPUT", ActCancel: "INVALID_INPUT"},
	}
	rows := 0
	for from, acts := range transitions {
		for act, fn := range acts {
			rows++
			next, err := fn("code")
			got := next
			if err != nil {
				e, ok := apierr.From(err)
				if !ok || e.Status != 400 {
					t.Fatalf("%s/%s: %v", from, act, err)
				}
				got = e.Code
			}
			if got != want[from][act] {
				t.Errorf("%s --%s--> %s, want %s", from, act, got, want[from][act])
			}
		}
	}
	if rows != 8 || len(transitions) != len(want) {
		t.Fatalf("%d rows", rows)
	}
}

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		c := newCode()
		if len(c) != 26 || seen[c] {
			t.Fatalf("%q", c)
		}
		seen[c] = true
	}
}
