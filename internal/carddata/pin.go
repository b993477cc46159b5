package carddata

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// fromRow is the machine state of a stored PIN row.
func fromRow(p store.CardPIN) PINState {
	return PINState{Status: PINStatus(p.Status), WrongTries: p.WrongTries, LastUnblockAt: p.LastUnblockAt}
}

// loadPIN reads a card's PIN row, locked (found false: no PIN).
func loadPIN(ctx context.Context, tx *store.Tx, t store.Tenant, cardID string) (store.CardPIN, bool, error) {
	p, err := tx.GetCardPIN(ctx, t, cardID, true)
	if errors.Is(err, store.ErrNotFound) {
		return store.CardPIN{CardID: cardID, Tenant: t}, false, nil
	}
	return p, err == nil, err
}

// PINState returns a card's PIN state (PINNone when no PIN was set).
func (s *Service) PINState(ctx context.Context, t store.Tenant, cardID string) (PINState, error) {
	p, err := s.db.Read().GetCardPIN(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) {
		return PINState{Status: PINNone}, nil
	}
	if err != nil {
		return PINState{}, err
	}
	return fromRow(p), nil
}

// openEnvelope decrypts a PIN envelope made for the card and returns its
// PVV under the current key.
func (s *Service) pvvOf(ctx context.Context, c Card, e PINEnvelope) (string, error) {
	k, err := s.loadKeys(ctx)
	if err != nil {
		return "", err
	}
	pin, err := OpenPIN(k.transport, c.ID, e)
	if err != nil {
		return "", err
	}
	return PVV(k.pvk, c.PAN, pvki, pin)
}

// SetPIN sets a card's PIN from a client-encrypted PIN block: its PVV is
// stored (never the PIN), the wrong-entry count is reset and a BLOCKED PIN
// is OK again.
func (s *Service) SetPIN(ctx context.Context, c Card, e PINEnvelope) (PINState, error) {
	pvv, err := s.pvvOf(ctx, c, e)
	if err != nil {
		return PINState{}, err
	}
	var out PINState
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		out, err = setPIN(ctx, tx, c, pvv, s.now())
		return err
	})
	return out, err
}

// SubmitPIN is SetPIN for a loaded PIN page: the page's submission token
// (already checked, see Check) is burned in the same transaction, so a page
// sets a PIN at most once.
func (s *Service) SubmitPIN(ctx context.Context, submit Claims, c Card, e PINEnvelope) (PINState, error) {
	if submit.Kind != KindPINSubmit || submit.CardID != c.ID || submit.Tenant() != c.Tenant {
		return PINState{}, ErrTokenInvalid
	}
	pvv, err := s.pvvOf(ctx, c, e)
	if err != nil {
		return PINState{}, err
	}
	var out PINState
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		now := s.now()
		if err := burn(ctx, tx, submit, now); err != nil {
			return err
		}
		out, err = setPIN(ctx, tx, c, pvv, now)
		return err
	})
	return out, err
}

func setPIN(ctx context.Context, tx *store.Tx, c Card, pvv string, now time.Time) (PINState, error) {
	row, found, err := loadPIN(ctx, tx, c.Tenant, c.ID)
	if err != nil {
		return PINState{}, err
	}
	st := PINState{Status: PINNone}
	if found {
		st = fromRow(row)
	}
	next, err := Step(st, EvSet, now)
	if err != nil {
		return PINState{}, err
	}
	row.PVV, row.PVKI, row.SetAt = pvv, pvki, now
	return next, putPIN(ctx, tx, row, next, now)
}

func putPIN(ctx context.Context, tx *store.Tx, row store.CardPIN, st PINState, now time.Time) error {
	row.Status, row.WrongTries, row.LastUnblockAt, row.UpdatedAt = string(st.Status), st.WrongTries, st.LastUnblockAt, now
	return tx.PutCardPIN(ctx, row)
}

// VerifyPIN checks a PIN entry (a client-encrypted PIN block) against the
// card's PVV and records the outcome: a right entry resets the wrong-entry
// count, a wrong one counts and the third consecutive wrong one blocks the
// PIN. It returns ErrNoPIN without a PIN and ErrPINBlocked on a blocked PIN.
func (s *Service) VerifyPIN(ctx context.Context, c Card, e PINEnvelope) (bool, PINState, error) {
	k, err := s.loadKeys(ctx)
	if err != nil {
		return false, PINState{}, err
	}
	pin, err := OpenPIN(k.transport, c.ID, e)
	if err != nil {
		return false, PINState{}, err
	}
	var ok bool
	var out PINState
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		row, found, err := loadPIN(ctx, tx, c.Tenant, c.ID)
		if err != nil || !found {
			return errors.Join(err, ErrNoPIN)
		}
		if ok, err = VerifyPVV(k.pvk, c.PAN, row.PVKI, pin, row.PVV); err != nil {
			return err
		}
		ev := EvVerifyWrong
		if ok {
			ev = EvVerifyRight
		}
		now := s.now()
		if out, err = Step(fromRow(row), ev, now); err != nil {
			return err
		}
		return putPIN(ctx, tx, row, out, now)
	})
	if errors.Is(err, ErrNoPIN) {
		err = ErrNoPIN
	}
	return ok, out, err
}

// Unblock restores a card's existing PIN (status OK, wrong entries
// forgotten), once per rolling seven days: a further unblock returns an
// *UnblockTooSoonError; without a PIN, ErrNoPIN.
func (s *Service) Unblock(ctx context.Context, t store.Tenant, cardID string) (PINState, error) {
	var out PINState
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		now := s.now()
		row, found, err := loadPIN(ctx, tx, t, cardID)
		if err != nil {
			return err
		}
		st := PINState{Status: PINNone}
		if found {
			st = fromRow(row)
			recent, err := tx.CardPINUnblocksSince(ctx, t, cardID, now.Add(-UnblockWindow))
			if err != nil {
				return err
			}
			if n := len(recent); n > 0 && recent[n-1].After(st.LastUnblockAt) {
				st.LastUnblockAt = recent[n-1]
			}
		}
		if out, err = Step(st, EvUnblock, now); err != nil {
			return err
		}
		if err := tx.InsertCardPINUnblock(ctx, t, cardID, now); err != nil {
			return err
		}
		return putPIN(ctx, tx, row, out, now)
	})
	return out, err
}

// CardPINStatus is a card's pinStatus and pinUnblockAvailableAt as the card
// resource shows them (the cards service's render hook): "" without a PIN,
// else OK or BLOCKED; the time only while an unblock is not available (the
// last one was less than seven days before q's clock).
func CardPINStatus(ctx context.Context, q store.Q, t store.Tenant, cardID string) (string, *time.Time, error) {
	p, err := q.GetCardPIN(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if at := fromRow(p).UnblockAvailableAt(q.Now()); !at.IsZero() {
		return p.Status, &at, nil
	}
	return p.Status, nil, nil
}
