package carddata

import (
	"errors"
	"fmt"
	"time"
)

// PINStatus is a card's PIN status: NONE (no PIN was ever set), OK or
// BLOCKED (the card resource's pinStatus shows OK or BLOCKED).
type PINStatus string

const (
	PINNone    PINStatus = "NONE"
	PINOK      PINStatus = "OK"
	PINBlocked PINStatus = "BLOCKED"
)

// MaxWrongTries consecutive wrong PIN entries block the PIN.
const MaxWrongTries = 3

// UnblockWindow: one PIN unblock per card per rolling window.
const UnblockWindow = 7 * 24 * time.Hour

// PINEvent is what happens to a card's PIN.
type PINEvent string

const (
	EvSet         PINEvent = "SET"          // set-pin (new PIN, any state)
	EvVerifyRight PINEvent = "VERIFY_RIGHT" // a PIN entry that matches
	EvVerifyWrong PINEvent = "VERIFY_WRONG" // a PIN entry that does not
	EvUnblock     PINEvent = "UNBLOCK"      // pin/unblock
)

// PINState is a card's PIN state as the machine sees it.
type PINState struct {
	Status        PINStatus
	WrongTries    int
	LastUnblockAt time.Time // zero: never unblocked
}

// Errors of the PIN machine.
var (
	// ErrNoPIN: the card has no PIN (409 on pin/unblock).
	ErrNoPIN = errors.New("carddata: the card has no PIN")
	// ErrPINBlocked: a PIN entry on a blocked PIN (PIN-verified
	// transactions decline until set-pin or an unblock clears it).
	ErrPINBlocked = errors.New("carddata: the card's PIN is blocked")
)

// UnblockTooSoonError: an unblock within UnblockWindow of the last one
// (409 PIN_CHANGE_REQUIRED with details.pinUnblockAvailableAt).
type UnblockTooSoonError struct{ AvailableAt time.Time }

func (e *UnblockTooSoonError) Error() string {
	return fmt.Sprintf("carddata: the PIN was unblocked in the last seven days; the next unblock is available at %s (set a new PIN instead)",
		e.AvailableAt.UTC().Format(time.RFC3339))
}

// guard decides whether a row applies to a state at a time.
type guard func(s PINState, now time.Time) bool

func always(PINState, time.Time) bool         { return true }
func belowLimit(s PINState, _ time.Time) bool { return s.WrongTries+1 < MaxWrongTries }
func atLimit(s PINState, _ time.Time) bool    { return s.WrongTries+1 >= MaxWrongTries }
func unblockAllowed(s PINState, now time.Time) bool {
	return s.LastUnblockAt.IsZero() || !now.Before(s.LastUnblockAt.Add(UnblockWindow))
}
func unblockTooSoon(s PINState, now time.Time) bool { return !unblockAllowed(s, now) }

// pinTransition is one row of the PIN machine: in state From, event Event,
// when Guard holds, the PIN moves To with effect Apply, or Err refuses it
// (the state is then unchanged, except where Apply says otherwise).
type pinTransition struct {
	From  PINStatus
	Event PINEvent
	Guard guard
	To    PINStatus
	Err   error
	Apply func(s *PINState, now time.Time)
}

func resetTries(s *PINState, _ time.Time)      { s.WrongTries = 0 }
func countWrong(s *PINState, _ time.Time)      { s.WrongTries++ }
func markUnblocked(s *PINState, now time.Time) { s.WrongTries, s.LastUnblockAt = 0, now }

// errUnblockTooSoon marks rows refused with an UnblockTooSoonError (built
// from the state).
var errUnblockTooSoon = errors.New("unblock too soon")

// pinTransitions is the whole PIN state machine.
var pinTransitions = []pinTransition{
	{From: PINNone, Event: EvSet, Guard: always, To: PINOK, Apply: resetTries},
	{From: PINOK, Event: EvSet, Guard: always, To: PINOK, Apply: resetTries},
	{From: PINBlocked, Event: EvSet, Guard: always, To: PINOK, Apply: resetTries},

	{From: PINNone, Event: EvVerifyRight, Guard: always, Err: ErrNoPIN},
	{From: PINNone, Event: EvVerifyWrong, Guard: always, Err: ErrNoPIN},
	{From: PINOK, Event: EvVerifyRight, Guard: always, To: PINOK, Apply: resetTries},
	{From: PINOK, Event: EvVerifyWrong, Guard: belowLimit, To: PINOK, Apply: countWrong},
	{From: PINOK, Event: EvVerifyWrong, Guard: atLimit, To: PINBlocked, Apply: countWrong},
	{From: PINBlocked, Event: EvVerifyRight, Guard: always, Err: ErrPINBlocked},
	{From: PINBlocked, Event: EvVerifyWrong, Guard: always, Err: ErrPINBlocked},

	{From: PINNone, Event: EvUnblock, Guard: always, Err: ErrNoPIN},
	{From: PINOK, Event: EvUnblock, Guard: unblockAllowed, To: PINOK, Apply: markUnblocked},
	{From: PINOK, Event: EvUnblock, Guard: unblockTooSoon, Err: errUnblockTooSoon},
	{From: PINBlocked, Event: EvUnblock, Guard: unblockAllowed, To: PINOK, Apply: markUnblocked},
	{From: PINBlocked, Event: EvUnblock, Guard: unblockTooSoon, Err: errUnblockTooSoon},
}

// Step applies an event to a PIN state at now: the first row of
// pinTransitions for the state and event whose guard holds decides.
func Step(s PINState, ev PINEvent, now time.Time) (PINState, error) {
	for _, row := range pinTransitions {
		if row.From != s.Status || row.Event != ev || !row.Guard(s, now) {
			continue
		}
		if row.Err == errUnblockTooSoon {
			return s, &UnblockTooSoonError{AvailableAt: s.LastUnblockAt.Add(UnblockWindow)}
		}
		if row.Err != nil {
			return s, row.Err
		}
		next := s
		next.Status = row.To
		if row.Apply != nil {
			row.Apply(&next, now)
		}
		return next, nil
	}
	return s, fmt.Errorf("carddata: no PIN transition for %s on %s", ev, s.Status)
}

// UnblockAvailableAt is when the next unblock is allowed (zero: now).
func (s PINState) UnblockAvailableAt(now time.Time) time.Time {
	if unblockAllowed(s, now) {
		return time.Time{}
	}
	return s.LastUnblockAt.Add(UnblockWindow)
}
