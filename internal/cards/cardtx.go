package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// cardTx is a card transaction being worked on: its row and card details.
type cardTx struct {
	row store.Transaction
	d   transactions.CardDetails
}

func txNotFound(txID string) error {
	return apierr.NotFound("TRANSACTION_NOT_FOUND", "Card transaction "+txID)
}

// loadTx reads a card transaction of the card, locked.
func loadTx(ctx context.Context, tx *store.Tx, c store.Card, txID string) (cardTx, error) {
	row, err := tx.GetTransactionForUpdate(ctx, c.Tenant, txID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (row.Type != transactions.TypeCard || row.CardID != c.ID)) {
		return cardTx{}, txNotFound(txID)
	}
	if err != nil {
		return cardTx{}, err
	}
	ct := cardTx{row: row}
	if err := json.Unmarshal(row.CardDetails, &ct.d); err != nil {
		return cardTx{}, fmt.Errorf("cards: details of %s: %w", txID, err)
	}
	return ct, nil
}

// refused answers a simulation the card transaction's status does not allow:
// nothing moves.
func refused(ct cardTx, what string) error {
	return apierr.Newf("INVALID_STATE_TRANSITION", "A %s card transaction cannot take %s", ct.row.Status, what)
}

// save moves a card transaction on event through TxMoves, writes it and
// emits CARD_TRANSACTION.<STATUS> with the full record (R-CARD-53).
func (s *Service) save(ctx context.Context, tx *store.Tx, ct *cardTx, event string) error {
	to, ok := txNext(ct.row.Status, event)
	if !ok {
		return refused(*ct, event)
	}
	raw, err := json.Marshal(ct.d)
	if err != nil {
		return err
	}
	at := now(tx)
	ct.row.Status, ct.row.CardDetails, ct.row.UpdatedAt = to, raw, at
	if (to == TxSettled || to == TxException) && ct.row.SettledAt == nil {
		ct.row.SettledAt = &at
	}
	if err := tx.UpdateTransaction(ctx, ct.row); err != nil {
		return err
	}
	if err := emitTx(ctx, tx, ct.row); err != nil {
		return err
	}
	return s.afterPurchase(ctx, tx, ct.row, ct.d, event)
}

// afterPurchase closes an agent's SINGLE_USE card once its purchase has
// cleared (final clearing, a clearing short of funds, a single-message
// purchase, or what a partial clearing left released).
func (s *Service) afterPurchase(ctx context.Context, tx *store.Tx, row store.Transaction, d transactions.CardDetails, event string) error {
	if row.Direction != transactions.Debit || row.CardID == "" {
		return nil
	}
	switch {
	case event == EvClearedFinal, event == EvClearingShort, event == EvSettledAtOnce:
	case event == EvReleased && d.SettledAmount > 0:
	default:
		return nil
	}
	return s.closeSpent(ctx, tx, row.Tenant, row.CardID)
}

func emitTx(ctx context.Context, tx *store.Tx, row store.Transaction) error {
	out, err := transactions.Render(row)
	if err != nil {
		return err
	}
	_, err = events.Emit(ctx, tx, row.Tenant, events.CardTransaction(row.Status), row.ID, out)
	return err
}

// create records a new card transaction entering status by event, with its
// ledger transfer or hold, and emits its event.
func (s *Service) create(ctx context.Context, tx *store.Tx, c store.Card, acct store.InternalAccount, event, direction string,
	d transactions.CardDetails, txID, transferID, holdID string) (store.Transaction, error) {
	status, ok := txNext("", event)
	if !ok {
		return store.Transaction{}, fmt.Errorf("cards: no creating move on %q", event)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return store.Transaction{}, err
	}
	merchant := transactions.Destination{DestinationType: "MERCHANT"}
	account := transactions.Source{SourceType: transactions.SideAccount, AccountID: acct.ID, Currency: acct.Currency,
		CustomerID: c.CustomerID}
	n := transactions.New{ID: txID, Type: transactions.TypeCard, Status: status, Direction: direction,
		CustomerID: c.CustomerID, AccountID: acct.ID, Source: account, Destination: merchant,
		SentAmount: d.AuthorizedAmount, SentCurrency: c.Currency, Reference: txID, Description: d.Merchant.Descriptor,
		LedgerTransferID: transferID, HoldID: holdID, CardID: c.ID, CardDetails: raw}
	if direction == transactions.Credit {
		n.Source = transactions.Source{SourceType: "MERCHANT"}
		n.Destination = transactions.Destination{DestinationType: transactions.SideAccount, AccountID: acct.ID, Currency: acct.Currency}
	}
	if status == TxSettled {
		at := now(tx)
		n.SettledAt = &at
	}
	out, err := transactions.Record(ctx, tx, c.Tenant, n)
	if err != nil {
		return store.Transaction{}, err
	}
	row, err := tx.GetTransaction(ctx, c.Tenant, out.ID)
	if err != nil {
		return store.Transaction{}, err
	}
	if err := emitTx(ctx, tx, row); err != nil {
		return row, err
	}
	return row, s.afterPurchase(ctx, tx, row, d, event)
}

// legs are the two ledger accounts of a card's money: the funding account
// and the tenant's card settlement account in its currency, and the factor
// from card units to funding units (USD cents to USDB micro-units).
type legs struct {
	funding store.InternalAccount
	holds   ledger.Account
	scale   int64
}

func (s *Service) legsOf(ctx context.Context, tx *store.Tx, c store.Card, accountID string) (legs, error) {
	a, err := tx.GetInternalAccount(ctx, c.Tenant, accountID)
	if err != nil {
		return legs{}, err
	}
	h, err := s.ledger().SystemAccountTx(ctx, tx, c.Tenant, ledger.CodeCardHolds, a.Currency)
	if err != nil {
		return legs{}, err
	}
	return legs{funding: a, holds: h, scale: scale(c.Currency, a.Currency)}, nil
}

// scale is 10^(decimals of funding − decimals of card): funding units per
// card unit.
func scale(card, funding string) int64 {
	cc, _ := currency.Lookup(card)
	fc, _ := currency.Lookup(funding)
	out := int64(1)
	for range fc.Decimals - cc.Decimals {
		out *= 10
	}
	return out
}

// postings moves amount (card units) from the funding account to the card
// settlement account (DEBIT) or back (CREDIT).
func (l legs) postings(direction string, amount int64) []ledger.PostingSpec {
	v := amount * l.scale
	if direction == transactions.Credit {
		v = -v
	}
	cur := l.funding.Currency
	return []ledger.PostingSpec{{AccountID: l.funding.LedgerAccountID, Currency: cur, Amount: -v},
		{AccountID: l.holds.ID, Currency: cur, Amount: v}}
}

// available is the funding account's available balance in card units.
func (s *Service) available(ctx context.Context, tx *store.Tx, c store.Card, l legs) (int64, error) {
	b, err := s.ledger().BalanceTx(ctx, tx, c.Tenant, l.funding.LedgerAccountID)
	if err != nil {
		return 0, err
	}
	return b.Available / l.scale, nil
}

// openAuth records a held authorization and when it expires.
func (s *Service) openAuth(ctx context.Context, tx *store.Tx, c store.Card, txID, accountID string, expires time.Time) error {
	return tx.InsertOpenCardAuthorization(ctx, store.OpenCardAuthorization{TransactionID: txID, Tenant: c.Tenant,
		CardID: c.ID, AccountID: accountID, ExpiresAt: expires, CreatedAt: now(tx)})
}
