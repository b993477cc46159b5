package cards

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// clearing applies a clearing to an open authorization: the hold posts up
// to the cleared amount (the rest is released, or kept held when final is
// false: PARTIALLY_SETTLED); a clearing above what is held pulls the
// difference from the funding account, and when that account cannot cover
// it the transaction is EXCEPTION (R-CARD-38: clearing may settle higher).
// An amount of 0 is the authorization's expiry.
func (s *Service) clearing(ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, req SimOnTransaction, _ string) error {
	if *req.Amount == 0 {
		return s.release(ctx, tx, c, ct, 0)
	}
	return s.clear(ctx, tx, c, ct, *req.Amount, req.Final == nil || *req.Final)
}

// checkOpen refuses what only an open authorization can take.
func checkOpen(what string) func(ct cardTx, req SimOnTransaction) error {
	return func(ct cardTx, _ SimOnTransaction) error {
		if !open(ct) {
			return refused(ct, what)
		}
		return nil
	}
}

func (s *Service) clear(ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, amount int64, final bool) error {
	l, err := s.legsOf(ctx, tx, c, ct.row.AccountID)
	if err != nil {
		return err
	}
	dir, held := ct.row.Direction, ct.d.HeldAmount
	posted := min(amount, held)
	post := ledger.TransferSpec{ID: id.New(ledger.TransferIDPrefix), Kind: ledger.KindPost, HoldID: ct.row.HoldID,
		Postings: l.postings(dir, posted), Reference: ct.row.ID, ToSuspense: dir == transactions.Credit}
	specs := []ledger.TransferSpec{post}
	rest := ""
	if !final && held > posted {
		rest = id.New(ledger.TransferIDPrefix)
		specs = append(specs, ledger.TransferSpec{ID: rest, Kind: ledger.KindHold, Postings: l.postings(dir, held-posted),
			Reference: ct.row.ID, ToSuspense: dir == transactions.Credit})
	}
	event := EvClearedFinal
	if !final {
		event = EvClearedPart
	}
	if extra := amount - posted; extra > 0 {
		more := append(specs, ledger.TransferSpec{Kind: ledger.KindTransfer, Postings: l.postings(dir, extra),
			Reference: ct.row.ID, ToSuspense: dir == transactions.Credit})
		if _, err := s.ledger().Apply(ctx, tx, c.Tenant, more); err == nil {
			specs = nil
		} else if !errors.Is(err, ledger.ErrInsufficientFunds) {
			return err
		} else {
			event, amount, rest = EvClearingShort, posted, "" // the network settled more than the account holds
			specs = specs[:1]
		}
	}
	if specs != nil {
		if _, err := s.ledger().Apply(ctx, tx, c.Tenant, specs); err != nil {
			return err
		}
	}
	if rest == "" && event == EvClearedPart {
		event = EvClearedFinal // nothing is left held for a later clearing
	}
	ct.d.SettledAmount += amount
	ct.d.Clearings++
	ct.d.HeldAmount = 0
	ct.row.HoldID, ct.row.LedgerTransferID = rest, post.ID
	if rest != "" {
		ct.d.HeldAmount = held - posted
	} else {
		ct.d.ExpiresAt = nil
		if err := tx.DeleteOpenCardAuthorization(ctx, c.Tenant, ct.row.ID); err != nil {
			return err
		}
	}
	return s.save(ctx, tx, ct, event)
}

// release gives back amount of what an open authorization holds (0: all of
// it): a reversal, an expiry, or the card's closing. Releasing all of it
// voids an uncleared authorization and closes a partially settled one as
// SETTLED.
func (s *Service) release(ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, amount int64) error {
	held := ct.d.HeldAmount
	void := ledger.TransferSpec{Kind: ledger.KindVoid, HoldID: ct.row.HoldID, Reference: ct.row.ID}
	if amount == 0 || amount >= held {
		if _, err := s.ledger().Apply(ctx, tx, c.Tenant, []ledger.TransferSpec{void}); err != nil {
			return err
		}
		ct.d.HeldAmount, ct.d.ExpiresAt, ct.row.HoldID = 0, nil, ""
		if err := tx.DeleteOpenCardAuthorization(ctx, c.Tenant, ct.row.ID); err != nil {
			return err
		}
		return s.save(ctx, tx, ct, EvReleased)
	}
	if err := s.rehold(ctx, tx, c, ct, held-amount); err != nil {
		return err
	}
	return s.save(ctx, tx, ct, EvResized)
}

// rehold replaces an open authorization's hold by one of amount (void and
// hold in one ledger batch).
func (s *Service) rehold(ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, amount int64) error {
	l, err := s.legsOf(ctx, tx, c, ct.row.AccountID)
	if err != nil {
		return err
	}
	next := id.New(ledger.TransferIDPrefix)
	_, err = s.ledger().Apply(ctx, tx, c.Tenant, []ledger.TransferSpec{
		{Kind: ledger.KindVoid, HoldID: ct.row.HoldID, Reference: ct.row.ID},
		{ID: next, Kind: ledger.KindHold, Postings: l.postings(ct.row.Direction, amount), Reference: ct.row.ID,
			ToSuspense: ct.row.Direction == transactions.Credit},
	})
	if err != nil {
		return err
	}
	ct.row.HoldID, ct.d.HeldAmount = next, amount
	return nil
}

// reversal releases amount (all when omitted) of an open authorization.
// Reversals restore no daily capacity (R-CARD-39).
func (s *Service) reversal(ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, req SimOnTransaction, _ string) error {
	amount := int64(0)
	if req.Amount != nil {
		amount = *req.Amount
	}
	return s.release(ctx, tx, c, ct, amount)
}

// checkAdvice: an advice re-sizes an open authorization to a new total; one
// below what has already cleared is impossible.
func checkAdvice(ct cardTx, req SimOnTransaction) error {
	if !open(ct) {
		return refused(ct, "an advice")
	}
	if ct.d.HeldAmount+*req.Amount-ct.d.AuthorizedAmount <= 0 {
		return refused(ct, "an advice below what has cleared")
	}
	return nil
}

// advise applies an authorization advice (or incremental authorization):
// the network has already approved the new total, so the issuer takes it
// and never declines it. An increase of a purchase counts against the
// card's day (it can make later authorizations decline) and is held as far
// as the funding account covers it; what it cannot cover is pulled at
// clearing, which leaves the transaction EXCEPTION if the account still
// cannot pay (docs/cards.md).
func (s *Service) advise(ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, req SimOnTransaction, _ string) error {
	delta := *req.Amount - ct.d.AuthorizedAmount
	held := ct.d.HeldAmount + delta
	if delta > 0 && ct.row.Direction == transactions.Debit {
		if err := s.spend(ctx, tx, c, delta, false); err != nil {
			return err
		}
		l, err := s.legsOf(ctx, tx, c, ct.row.AccountID)
		if err != nil {
			return err
		}
		avail, err := s.available(ctx, tx, c, l)
		if err != nil {
			return err
		}
		held = ct.d.HeldAmount + min(delta, max(avail, 0))
	}
	if err := s.rehold(ctx, tx, c, ct, held); err != nil {
		return err
	}
	ct.d.AuthorizedAmount = *req.Amount
	return s.save(ctx, tx, ct, EvResized)
}
