package id

import (
	"regexp"
	"sort"
	"testing"
	"time"
)

// R-CONV-01: ids are <Type>:<uuid>.
func TestNew_R_CONV_01_Format(t *testing.T) {
	re := regexp.MustCompile(`^Token:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for range 100 {
		if s := New(Token); !re.MatchString(s) {
			t.Fatalf("bad id %q", s)
		}
	}
}

func TestNew_SortsByCreation(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = New(Token)
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("UUIDv7 ids created in sequence must sort in creation order")
	}
}

func TestValid(t *testing.T) {
	good := New(Token)
	cases := map[string]bool{
		good:                   true,
		"Token:not-a-uuid":     false,
		"Platform:" + good[6:]: false,
		"":                     false,
		"Token:" + "0195A2F5-B3E7-7D02-8000-000000000001": false, // not canonical
	}
	for in, want := range cases {
		if got := Valid(Token, in); got != want {
			t.Errorf("Valid(%q)=%v want %v", in, got, want)
		}
	}
}

func TestFloorOrdersBeforeEveryLaterID(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	floor := Floor("Transaction", before)
	for range 100 {
		if got := New("Transaction"); got < floor {
			t.Fatalf("New %s sorts before Floor %s of an earlier time", got, floor)
		}
	}
	if later := Floor("Transaction", before.Add(time.Hour)); later <= floor {
		t.Fatalf("Floor an hour later %s does not sort after %s", later, floor)
	}
	if !Valid("Transaction", floor) {
		t.Fatalf("Floor %s is not a valid id", floor)
	}
}
