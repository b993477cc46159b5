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

// At stamps an id with the time it is given, not the clock's: a fake clock's
// time, a real one's, and many ids of one millisecond, in order.
func TestAt_StampsItsTime(t *testing.T) {
	re := regexp.MustCompile(`^Event:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, at := range []time.Time{
		time.Date(2020, 3, 4, 5, 6, 7, 891_234_567, time.UTC), // behind the clock, as a test's clock is
		time.Now(),
		time.Now().Add(48 * time.Hour),
	} {
		got := At(Event, at)
		if !re.MatchString(got) || !Valid(Event, got) {
			t.Fatalf("At(%s) = %q: not a UUIDv7 id", at, got)
		}
		if lo, hi := Floor(Event, at), Floor(Event, at.Add(time.Millisecond)); got < lo || got >= hi {
			t.Fatalf("At(%s) = %s, outside its millisecond [%s, %s)", at, got, lo, hi)
		}
	}
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := make([]string, 5000) // more than one millisecond's 4,096 fractions
	for i := range ids {
		ids[i] = At(Event, at)
	}
	if !sort.StringsAreSorted(ids) || ids[0] == ids[1] {
		t.Fatal("ids At one time must follow each other")
	}
	if last := ids[len(ids)-1]; last >= Floor(Event, at.Add(2*time.Millisecond)) {
		t.Fatalf("5,000 ids of one millisecond ran past the next one: %s", last)
	}
	// A time shortly before the last id's stamp (out of order) follows it too.
	if got := At(Event, at.Add(-500*time.Microsecond)); got <= ids[len(ids)-1] {
		t.Fatalf("At half a millisecond back = %s, not after %s", got, ids[len(ids)-1])
	}
	// A time further back is a clock set back: the id keeps its stamp.
	back := at.Add(-time.Second)
	if got := At(Event, back); got < Floor(Event, back) || got >= Floor(Event, back.Add(time.Millisecond)) {
		t.Fatalf("At a second back = %s, not in its own millisecond", got)
	}
}

// Window's range holds every id At makes within the window and its slack,
// and no id outside it by more than the slack.
func TestWindow_HoldsTheWindowsIDs(t *testing.T) {
	from := time.Date(2032, 5, 6, 7, 8, 9, 0, time.UTC)
	to := from.Add(time.Hour)
	lo, hi := Window(Event, &from, &to)
	for _, at := range []time.Time{from, from.Add(time.Nanosecond), from.Add(30 * time.Minute), to} {
		if got := At(Event, at); got < lo || got >= hi {
			t.Fatalf("At(%s) = %s outside Window [%s, %s)", at, got, lo, hi)
		}
	}
	for _, at := range []time.Time{from.Add(-2 * WindowSlack), to.Add(2 * WindowSlack)} {
		if got := At(Event, at); got >= lo && got < hi {
			t.Fatalf("At(%s) = %s inside Window [%s, %s) though outside its slack", at, got, lo, hi)
		}
	}
	if lo, hi := Window(Event, nil, nil); lo != "" || hi != "" {
		t.Fatalf("Window without bounds = %q, %q; want none", lo, hi)
	}
	if _, hi := Window(Event, &from, nil); hi != "" {
		t.Fatalf("Window without an end has an upper bound %q", hi)
	}
}
