package cards

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

func spendLimit() error {
	return apierr.New("TRANSACTION_SIZE_LIMIT_EXCEEDED", "The increase breaks the card's spend limits; nothing moved")
}

// Return applies a merchant return on a settled purchase: the money comes
// back to the funding account as its own CREDIT card transaction (SETTLED,
// originalTransactionId), and the purchase stays SETTLED with its
// refundedAmount, its SETTLED event fired again (R-CARD-51, R-CARD-54).
func (s *Service) Return(ctx context.Context, t store.Tenant, cardID string, req SimOnTransaction) (SimResult, error) {
	if err := req.Validate("required", false); err != nil {
		return SimResult{}, err
	}
	var out SimResult
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := lockCard(ctx, tx, t, cardID)
		if err != nil {
			return err
		}
		orig, err := loadTx(ctx, tx, c, *req.CardTransactionID)
		if err != nil {
			return err
		}
		row, err := s.returnOn(ctx, tx, c, &orig, *req.Amount)
		if err != nil {
			return err
		}
		if out, err = result(row, row.Reference); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	return out, err
}

func (s *Service) returnOn(ctx context.Context, tx *store.Tx, c store.Card, orig *cardTx, amount int64) (store.Transaction, error) {
	if orig.row.Status != TxSettled || orig.row.Direction != transactions.Debit {
		return store.Transaction{}, refused(*orig, "a return (only a settled purchase can be returned)")
	}
	if amount > orig.d.SettledAmount-orig.d.RefundedAmount {
		var f apierr.Fields
		f.Add("amount", apierr.Maximum, "must be at most %d, what is settled and not yet returned", orig.d.SettledAmount-orig.d.RefundedAmount)
		return store.Transaction{}, f.Err()
	}
	l, err := s.legsOf(ctx, tx, c, orig.row.AccountID)
	if err != nil {
		return store.Transaction{}, err
	}
	txID := id.New(id.Transaction)
	spec := ledger.TransferSpec{ID: id.New(ledger.TransferIDPrefix), Postings: l.postings(transactions.Credit, amount),
		Reference: txID, ToSuspense: true}
	if _, err := s.ledger().Apply(ctx, tx, c.Tenant, []ledger.TransferSpec{spec}); err != nil {
		return store.Transaction{}, err
	}
	at := now(tx)
	d := transactions.CardDetails{CardID: c.ID, Kind: KindReturn, Merchant: orig.d.Merchant, AuthorizedAmount: amount,
		SettledAmount: amount, Clearings: 1, OriginalTransactionID: orig.row.ID, IssuerTransactionID: newToken(txID), AuthorizedAt: &at}
	row, err := s.create(ctx, tx, c, l.funding, EvSettledAtOnce, transactions.Credit, d, txID, spec.ID, "")
	if err != nil {
		return row, err
	}
	orig.d.RefundedAmount += amount
	return row, s.save(ctx, tx, orig, EvReturned)
}

// ReturnReversal reverses a return (cardTransactionId names the return's
// row): its ledger transfer is reversed, the return is VOIDED and the
// purchase's refundedAmount goes down again, its SETTLED event fired again.
// Money the customer has spent since cannot be taken back: refused.
func (s *Service) ReturnReversal(ctx context.Context, t store.Tenant, cardID string, req SimOnTransaction) (SimResult, error) {
	if err := req.Validate("none", false); err != nil {
		return SimResult{}, err
	}
	return s.onTransaction(ctx, t, cardID, req, func(tx *store.Tx, c store.Card, ret *cardTx) error {
		if ret.d.Kind != KindReturn || ret.row.Status != TxSettled {
			return refused(*ret, "a return reversal (only a settled return can be reversed)")
		}
		orig, err := loadTx(ctx, tx, c, ret.d.OriginalTransactionID)
		if err != nil {
			return err
		}
		rev := ledger.TransferSpec{Kind: ledger.KindReversal, ReversesID: ret.row.LedgerTransferID, Reference: ret.row.ID}
		if _, err := s.ledger().Apply(ctx, tx, c.Tenant, []ledger.TransferSpec{rev}); errors.Is(err, ledger.ErrInsufficientFunds) {
			return insufficient("the reversed return")
		} else if err != nil {
			return err
		}
		if err := s.save(ctx, tx, ret, EvReturnReversed); err != nil {
			return err
		}
		orig.d.RefundedAmount -= ret.d.SettledAmount
		return s.save(ctx, tx, &orig, EvReturned)
	})
}

// reconcileOnClose settles what a closing card leaves open: each open
// authorization's hold is released in the closing transaction (VOIDED, or
// SETTLED when partly cleared), so no money stays reserved for a card that
// can no longer clear.
func (s *Service) reconcileOnClose(ctx context.Context, tx *store.Tx, c store.Card) error {
	auths, err := tx.OpenCardAuthorizationsOfCard(ctx, c.Tenant, c.ID)
	if err != nil {
		return err
	}
	for _, a := range auths {
		ct, err := loadTx(ctx, tx, c, a.TransactionID)
		if err != nil {
			return err
		}
		if err := s.release(ctx, tx, c, &ct, 0); err != nil {
			return err
		}
	}
	return nil
}

// expireDue releases authorizations past their expiry, each in its own
// transaction (durable: the open authorizations are rows; an expiry that
// fails is found again on the next pass).
func (s *Service) expireDue(ctx context.Context) (int, error) {
	due, err := s.DB.Read().DueCardAuthorizations(ctx, s.DB.Now(), issuanceBatch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var errs []error
	for _, a := range due {
		errs = append(errs, s.expire(ctx, a))
	}
	return len(due), errors.Join(errs...)
}

func (s *Service) expire(ctx context.Context, a store.OpenCardAuthorization) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.GetCard(ctx, a.Tenant, a.CardID, true)
		if err != nil {
			return err
		}
		ct, err := loadTx(ctx, tx, c, a.TransactionID)
		if err != nil {
			return err
		}
		if !open(ct) || ct.d.ExpiresAt == nil || ct.d.ExpiresAt.After(tx.Now()) {
			return nil // cleared, reversed or extended meanwhile
		}
		return s.release(ctx, tx, c, &ct, 0)
	})
}

// CardSettlement is accounts.Service.CardSettlement: whether the account had
// card activity before end, and whether authorizations made before end are
// still open (R-STMT-09 for cards).
func (s *Service) CardSettlement(ctx context.Context, q store.Q, t store.Tenant, accountID string, end time.Time) (bool, bool, error) {
	activity, err := q.HadCardActivity(ctx, t, accountID, end)
	if err != nil || !activity {
		return false, false, err
	}
	open, err := q.HasOpenCardAuthorizations(ctx, t, accountID, end)
	return true, open, err
}
