package cards

import (
	"context"
	"errors"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// The sandbox card network. Each message is applied (by the card runner,
// messages.go) in one database transaction: the authorization decision, the
// ledger hold or posting (reference: the card transaction's id), the card
// transaction and its CARD_TRANSACTION.* event commit together or not at
// all. Money moves only through package ledger.

// lockCard reads the tenant's card, locked.
func lockCard(ctx context.Context, tx *store.Tx, t store.Tenant, cardID string) (store.Card, error) {
	if !id.Valid(id.Card, cardID) {
		return store.Card{}, notFound(cardID)
	}
	c, err := tx.GetCard(ctx, t, cardID, true)
	if errors.Is(err, store.ErrNotFound) {
		return store.Card{}, notFound(cardID)
	}
	return c, err
}

// newToken is the sandbox network's token of a message: the transaction's
// uuid (its dashes kept, so no long digit run looks like a card number).
func newToken(txID string) string {
	return "sbx_net_" + strings.TrimPrefix(txID, id.Transaction+":")
}

// authorize applies an authorization-family message as the card transaction
// txID: a purchase authorization (KindAuthorization: hold), a
// single-message purchase (KindFinancial: posted at once), a merchant credit
// (KindCredit: pending credit) or a single-message credit
// (KindFinancialCredit). A decline is recorded DECLINED with its reason and
// moves no money.
func (s *Service) authorize(ctx context.Context, tx *store.Tx, c store.Card, kind string, req SimAuthorization, txID string) (store.Transaction, error) {
	debit := kind == KindAuthorization || kind == KindFinancial
	dir := transactions.Credit
	if debit {
		dir = transactions.Debit
	}
	at := now(tx)
	d := transactions.CardDetails{CardID: c.ID, Kind: kind, Merchant: req.Merchant.record(), AuthorizedAmount: *req.Amount,
		IssuerTransactionID: newToken(txID), AuthorizedAt: &at}
	var l legs
	if c.FundingSource != "" {
		var err error
		if l, err = s.legsOf(ctx, tx, c, c.FundingSource); err != nil {
			return store.Transaction{}, err
		}
	}
	r := authRequest{amount: *req.Amount, currency: *req.Currency.Code, merchant: *req.Merchant, debit: debit}
	reason, err := s.decide(ctx, tx, c, r, &l)
	if err != nil {
		return store.Transaction{}, err
	}
	if reason == "" {
		row, err := s.approve(ctx, tx, c, l, dir, &d, txID)
		if !errors.Is(err, ledger.ErrInsufficientFunds) {
			return row, err
		}
		reason = DeclineInsufficientFunds // funds moved between the decision and the hold
	}
	d.DeclinedReason = reason
	return s.create(ctx, tx, c, l.funding, EvDeclined, dir, d, txID, "", "")
}

// approve moves the money of an approved authorization and records it.
func (s *Service) approve(ctx context.Context, tx *store.Tx, c store.Card, l legs, dir string, d *transactions.CardDetails, txID string) (store.Transaction, error) {
	amount := d.AuthorizedAmount
	single := d.Kind == KindFinancial || d.Kind == KindFinancialCredit
	spec := ledger.TransferSpec{ID: id.New(ledger.TransferIDPrefix), Kind: ledger.KindHold, Postings: l.postings(dir, amount),
		Reference: txID, ToSuspense: dir == transactions.Credit}
	if single {
		spec.Kind = ledger.KindTransfer
	}
	if _, err := s.ledger().Apply(ctx, tx, c.Tenant, []ledger.TransferSpec{spec}); err != nil {
		return store.Transaction{}, err
	}
	if dir == transactions.Debit {
		if err := s.spend(ctx, tx, c, amount, true); err != nil {
			return store.Transaction{}, err
		}
		if err := lockMerchant(ctx, tx, &c, d.Merchant.Descriptor); err != nil {
			return store.Transaction{}, err
		}
	}
	if single {
		d.SettledAmount, d.Clearings = amount, 1
		return s.create(ctx, tx, c, l.funding, EvSettledAtOnce, dir, *d, txID, spec.ID, "")
	}
	expires := now(tx).Add(s.AuthorizationTTL)
	d.HeldAmount, d.ExpiresAt = amount, &expires
	row, err := s.create(ctx, tx, c, l.funding, EvApproved, dir, *d, txID, "", spec.ID)
	if err != nil {
		return row, err
	}
	return row, s.openAuth(ctx, tx, c, txID, l.funding.ID, expires)
}

// spend counts amount against the card's day (R-CARD-39).
func (s *Service) spend(ctx context.Context, tx *store.Tx, c store.Card, amount int64, counted bool) error {
	at := now(tx)
	return tx.InsertCardSpend(ctx, store.CardSpend{ID: id.New("CardSpend"), Tenant: c.Tenant, CardID: c.ID, Day: day(at),
		Amount: amount, Counted: counted, CreatedAt: at})
}

// BalanceInquiry answers a zero-amount authorization: approved with the
// funding account's available balance, or declined with its reason. It
// moves no money and records no transaction.
func (s *Service) BalanceInquiry(ctx context.Context, t store.Tenant, cardID string, req SimAuthorization) (SimResult, error) {
	if err := req.Validate(true); err != nil {
		return SimResult{}, err
	}
	var out SimResult
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := lockCard(ctx, tx, t, cardID)
		if err != nil {
			return err
		}
		var l legs
		if c.FundingSource != "" {
			if l, err = s.legsOf(ctx, tx, c, c.FundingSource); err != nil {
				return err
			}
		}
		r := authRequest{currency: c.Currency, merchant: *req.Merchant}
		reason, err := s.decide(ctx, tx, c, r, &l)
		if err != nil {
			return err
		}
		approved := reason == ""
		out = SimResult{IssuerTransactionToken: newToken(id.New(id.Transaction)), Approved: &approved, DeclinedReason: reason}
		if approved {
			avail, err := s.available(ctx, tx, c, l)
			bal := transactions.Amount(avail, c.Currency)
			out.AvailableBalance = &bal
			return err
		}
		return nil
	})
	return out, err
}

func open(ct cardTx) bool {
	return ct.row.Status == TxAuthorized || ct.row.Status == TxPartiallySettled
}

func insufficient(what string) error {
	return apierr.Newf("INSUFFICIENT_FUNDS", "The funding account cannot cover %s; nothing moved", what)
}
