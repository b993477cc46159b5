package cards

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Clear applies a clearing to an open authorization: the hold posts up to
// the cleared amount (the rest is released, or kept held when final is
// false: PARTIALLY_SETTLED); a clearing above what is held pulls the
// difference from the funding account, and when that account cannot cover
// it the transaction is EXCEPTION (R-CARD-38: clearing may settle higher).
// An amount of 0 is the authorization's expiry.
func (s *Service) Clear(ctx context.Context, t store.Tenant, cardID string, req SimOnTransaction) (SimResult, error) {
	if err := req.Validate("required", true); err != nil {
		return SimResult{}, err
	}
	final := req.Final == nil || *req.Final
	return s.onTransaction(ctx, t, cardID, req, func(tx *store.Tx, c store.Card, ct *cardTx) error {
		if !open(*ct) {
			return refused(*ct, "a clearing")
		}
		if *req.Amount == 0 {
			return s.release(ctx, tx, c, ct, 0)
		}
		return s.clear(ctx, tx, c, ct, *req.Amount, final)
	})
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

// Reverse applies a reversal: amount (all when omitted) of an open
// authorization is released. Reversals restore no daily capacity
// (R-CARD-39).
func (s *Service) Reverse(ctx context.Context, t store.Tenant, cardID string, req SimOnTransaction) (SimResult, error) {
	if err := req.Validate("optional", false); err != nil {
		return SimResult{}, err
	}
	return s.onTransaction(ctx, t, cardID, req, func(tx *store.Tx, c store.Card, ct *cardTx) error {
		if !open(*ct) {
			return refused(*ct, "a reversal")
		}
		amount := int64(0)
		if req.Amount != nil {
			amount = *req.Amount
		}
		return s.release(ctx, tx, c, ct, amount)
	})
}

// Advise re-sizes an open authorization to a new total authorized amount
// (authorization advice, incremental authorization). An increase of a
// purchase is checked against the limits and the funds like an
// authorization; one they refuse moves nothing.
func (s *Service) Advise(ctx context.Context, t store.Tenant, cardID string, req SimOnTransaction) (SimResult, error) {
	if err := req.Validate("required", false); err != nil {
		return SimResult{}, err
	}
	return s.onTransaction(ctx, t, cardID, req, func(tx *store.Tx, c store.Card, ct *cardTx) error {
		if !open(*ct) {
			return refused(*ct, "an advice")
		}
		delta := *req.Amount - ct.d.AuthorizedAmount
		held := ct.d.HeldAmount + delta
		if held <= 0 {
			return refused(*ct, "an advice below what has cleared")
		}
		if delta > 0 && ct.row.Direction == transactions.Debit {
			if err := s.checkIncrease(ctx, tx, c, *req.Amount, delta); err != nil {
				return err
			}
		}
		if err := s.rehold(ctx, tx, c, ct, held); errors.Is(err, ledger.ErrInsufficientFunds) {
			return insufficient("the increase")
		} else if err != nil {
			return err
		}
		ct.d.AuthorizedAmount = *req.Amount
		return s.save(ctx, tx, ct, EvResized)
	})
}

func (s *Service) checkIncrease(ctx context.Context, tx *store.Tx, c store.Card, total, delta int64) error {
	k, err := s.capsOf(ctx, c)
	if err != nil {
		return err
	}
	over, err := s.overLimits(ctx, tx, c, delta, false)
	if err != nil {
		return err
	}
	if over || (!Programs[c.Currency].IssuerDecides && k.perTxn != nil && total > *k.perTxn) {
		return spendLimit()
	}
	return s.spend(ctx, tx, c, delta, false)
}
