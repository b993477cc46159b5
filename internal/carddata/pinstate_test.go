package carddata

import (
	"errors"
	"testing"
	"time"
)

// Walks every row of pinTransitions: a state that selects the row, the
// event, and the row's outcome.
func TestPINTransitions_EveryRow(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	recent := now.Add(-24 * time.Hour)
	old := now.Add(-UnblockWindow)
	for i, row := range pinTransitions {
		s := PINState{Status: row.From}
		switch {
		case row.From == PINOK && row.Event == EvVerifyWrong && row.To == PINBlocked:
			s.WrongTries = MaxWrongTries - 1
		case row.From == PINOK && row.Event == EvVerifyWrong:
			s.WrongTries = 1
		case row.Event == EvUnblock && row.Err == errUnblockTooSoon:
			s.LastUnblockAt = recent
		case row.Event == EvUnblock:
			s.LastUnblockAt = old // exactly seven days ago: allowed again
		case row.From == PINBlocked:
			s.WrongTries = MaxWrongTries
		}
		if !row.Guard(s, now) {
			t.Fatalf("row %d: the state chosen for it does not select it", i)
		}
		next, err := Step(s, row.Event, now)
		switch {
		case row.Err == errUnblockTooSoon:
			var soon *UnblockTooSoonError
			if !errors.As(err, &soon) || !soon.AvailableAt.Equal(recent.Add(UnblockWindow)) || next != s {
				t.Errorf("row %d: %v, %+v", i, err, next)
			}
		case row.Err != nil:
			if !errors.Is(err, row.Err) || next != s {
				t.Errorf("row %d: want %v unchanged, got %v %+v", i, row.Err, err, next)
			}
		default:
			if err != nil || next.Status != row.To {
				t.Errorf("row %d: %s on %s = %+v, %v; want %s", i, row.Event, row.From, next, err, row.To)
			}
		}
	}
}

// R-CARD-41: A PIN becomes BLOCKED after three consecutive incorrect
// entries; PIN-verified transactions decline until cleared (set-pin clears,
// R-CARD-45; an unblock clears once per seven days, R-CARD-46).
func TestPIN_R_CARD_41_ThreeWrongBlock(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s, err := Step(PINState{Status: PINNone}, EvSet, now)
	if err != nil || s.Status != PINOK {
		t.Fatal(s, err)
	}
	s, _ = Step(s, EvVerifyWrong, now)
	s, _ = Step(s, EvVerifyWrong, now)
	s, _ = Step(s, EvVerifyRight, now) // a right entry: the count restarts
	if s.WrongTries != 0 || s.Status != PINOK {
		t.Fatalf("after a right entry %+v", s)
	}
	for i := 1; i <= 3; i++ {
		s, _ = Step(s, EvVerifyWrong, now)
		if want := map[bool]PINStatus{true: PINBlocked, false: PINOK}[i == 3]; s.Status != want {
			t.Fatalf("after %d wrong: %s", i, s.Status)
		}
	}
	if _, err := Step(s, EvVerifyRight, now); !errors.Is(err, ErrPINBlocked) {
		t.Fatalf("the right PIN on a blocked PIN: %v", err)
	}
	// R-CARD-45: set-pin clears BLOCKED.
	if s2, err := Step(s, EvSet, now); err != nil || s2.Status != PINOK || s2.WrongTries != 0 {
		t.Fatalf("set on blocked: %+v %v", s2, err)
	}
	// R-CARD-46: unblock once per rolling seven days.
	u, err := Step(s, EvUnblock, now)
	if err != nil || u.Status != PINOK || !u.LastUnblockAt.Equal(now) {
		t.Fatalf("unblock: %+v %v", u, err)
	}
	later := now.Add(UnblockWindow - time.Second)
	_, err = Step(u, EvUnblock, later)
	var soon *UnblockTooSoonError
	if !errors.As(err, &soon) || !soon.AvailableAt.Equal(now.Add(UnblockWindow)) {
		t.Fatalf("second unblock within 7 days: %v", err)
	}
	if got := u.UnblockAvailableAt(later); !got.Equal(now.Add(UnblockWindow)) {
		t.Fatalf("available at %v", got)
	}
	if _, err := Step(u, EvUnblock, now.Add(UnblockWindow)); err != nil {
		t.Fatalf("unblock after 7 days: %v", err)
	}
	// R-CARD-47: unblock without a PIN is refused.
	if _, err := Step(PINState{Status: PINNone}, EvUnblock, now); !errors.Is(err, ErrNoPIN) {
		t.Fatalf("unblock without PIN: %v", err)
	}
}
