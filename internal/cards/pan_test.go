package cards

import (
	"strings"
	"testing"
	"time"
)

func TestNewPAN_PassesLuhnOnTheTestBIN(t *testing.T) {
	for _, p := range Programs {
		seen := map[string]bool{}
		for range 200 {
			pan, err := newPAN(p.BIN)
			if err != nil {
				t.Fatal(err)
			}
			if len(pan) != panLength || !strings.HasPrefix(pan, p.BIN) || !LuhnValid(pan) {
				t.Fatalf("PAN on %s: length %d, prefix ok %v, Luhn %v", p.BIN, len(pan), strings.HasPrefix(pan, p.BIN), LuhnValid(pan))
			}
			seen[pan] = true
		}
		if len(seen) < 190 {
			t.Fatalf("only %d distinct numbers of 200", len(seen))
		}
	}
}

func TestLuhnValid_KnownNumbers(t *testing.T) {
	for pan, want := range map[string]bool{
		"4242424242424242": true, "4000056655665556": true, "5105105105105100": true,
		"4242424242424241": false, "79927398710": false, "79927398713": true, "": false, "4a42": false,
	} {
		if got := LuhnValid(pan); got != want {
			t.Errorf("LuhnValid(%q) = %v, want %v", pan, got, want)
		}
	}
}

func TestExpiry_ThreeYearsAhead(t *testing.T) {
	m, y := expiry(time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC))
	if m != 11 || y != 2029 {
		t.Fatalf("expiry %d/%d", m, y)
	}
}
