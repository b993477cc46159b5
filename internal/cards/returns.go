package cards

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// checkReturn: a return needs a settled purchase with that much settled
// and not yet returned.
func checkReturn(orig cardTx, req SimOnTransaction) error {
	if orig.row.Status != TxSettled || orig.row.Direction != transactions.Debit {
		return refused(orig, "a return (only a settled purchase can be returned)")
	}
	if left := orig.d.SettledAmount - orig.d.RefundedAmount; *req.Amount > left {
		var f apierr.Fields
		f.Add("amount", apierr.Maximum, "must be at most %d, what is settled and not yet returned", left)
		return f.Err()
	}
	return nil
}

// returning applies a merchant return on a settled purchase: the money
// comes back to the funding account as its own CREDIT card transaction txID
// (SETTLED, originalTransactionId), and the purchase stays SETTLED with its
// refundedAmount, its SETTLED event fired again (R-CARD-51, R-CARD-54).
func (s *Service) returning(ctx context.Context, tx *store.Tx, c store.Card, orig *cardTx, req SimOnTransaction, txID string) error {
	amount := *req.Amount
	l, err := s.legsOf(ctx, tx, c, orig.row.AccountID)
	if err != nil {
		return err
	}
	spec := ledger.TransferSpec{ID: id.New(ledger.TransferIDPrefix), Postings: l.postings(transactions.Credit, amount),
		Reference: txID, ToSuspense: true}
	if _, err := s.ledger().Apply(ctx, tx, c.Tenant, []ledger.TransferSpec{spec}); err != nil {
		return err
	}
	at := now(tx)
	d := transactions.CardDetails{CardID: c.ID, Kind: KindReturn, Merchant: orig.d.Merchant, AuthorizedAmount: amount,
		SettledAmount: amount, Clearings: 1, OriginalTransactionID: orig.row.ID, IssuerTransactionID: newToken(txID), AuthorizedAt: &at}
	if _, err := s.create(ctx, tx, c, l.funding, EvSettledAtOnce, transactions.Credit, d, txID, spec.ID, ""); err != nil {
		return err
	}
	orig.d.RefundedAmount += amount
	return s.save(ctx, tx, orig, EvReturned)
}

// checkReturnReversal: only a settled return (cardTransactionId names the
// return's row) can be reversed.
func checkReturnReversal(ret cardTx, _ SimOnTransaction) error {
	if ret.d.Kind != KindReturn || ret.row.Status != TxSettled {
		return refused(ret, "a return reversal (only a settled return can be reversed)")
	}
	return nil
}

// returnReversal reverses a return: its ledger transfer is reversed, the
// return is VOIDED and the purchase's refundedAmount goes down again, its
// SETTLED event fired again. Money the customer has spent since cannot be
// taken back: refused (the message FAILS with INSUFFICIENT_FUNDS).
func (s *Service) returnReversal(ctx context.Context, tx *store.Tx, c store.Card, ret *cardTx, _ SimOnTransaction, _ string) error {
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
