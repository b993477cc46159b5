package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Suspense accounts and closing (issue 25).
//
// Deleting a customer closes its accounts: in the delete's transaction the
// ledger balance rows behind them are locked (the rows every transfer locks
// first), checked to hold nothing, and marked closed; the internal accounts
// become CLOSED. The ledger then refuses any credit to them (ErrAccountClosed)
// except money that must still arrive — a payout's return or refund, a
// dishonored return, an incoming payment approved after the owner left —
// which goes to the platform's suspense account of its currency instead.
//
// A suspense account is a platform internal account (type INTERNAL_FIAT or
// INTERNAL_CRYPTO by currency, `suspense: true`, no funding instructions),
// created the first time money goes to suspense in its currency. GET
// /platform/internal-accounts lists it with its balance; the platform
// resolves it by moving the money out with the ordinary routes (POST /quotes
// or POST /transfer-out with it as the source). It cannot be funded,
// deposited into or chosen as a quote's or routing rule's destination: only
// the ledger's redirection credits it, so its balance is exactly what is
// waiting to be resolved.

// NewLedger returns the ledger over db with its Suspense hook set: the
// ledger every money path should use.
func NewLedger(db *store.DB) *ledger.Service {
	l := ledger.New(db)
	l.Suspense = func(ctx context.Context, tx *store.Tx, t store.Tenant, cur string) (string, error) {
		a, err := SuspenseTx(ctx, tx, l, t, cur)
		return a.LedgerAccountID, err
	}
	return l
}

// SuspenseTx returns the tenant's suspense account in cur, creating it
// inside tx if it does not exist yet (an insert that does nothing when a
// concurrent transaction created it first).
func SuspenseTx(ctx context.Context, tx *store.Tx, l *ledger.Service, t store.Tenant, cur string) (store.InternalAccount, error) {
	a, err := tx.SuspenseAccount(ctx, t, cur)
	if !errors.Is(err, store.ErrNotFound) {
		return a, err
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	row, err := newRow(t, "", typeFor(cur), cur, "", now)
	if err != nil {
		return store.InternalAccount{}, err
	}
	row.Suspense, row.Instructions = true, []byte("[]")
	inserted, err := tx.InsertInternalAccount(ctx, row)
	if err != nil {
		return store.InternalAccount{}, err
	}
	if !inserted {
		return tx.SuspenseAccount(ctx, t, cur)
	}
	if _, err := l.CreateAccountTx(ctx, tx, t, ledger.AccountSpec{ID: row.LedgerAccountID, Currency: cur,
		Kind: ledger.Internal, Name: "Suspense " + cur + " of platform"}); err != nil {
		return store.InternalAccount{}, err
	}
	return row, nil
}

// ClosedError turns the ledger's refusal to credit a closed account into
// the API's answer: the account is gone with its owner, 404
// ACCOUNT_NOT_FOUND, as for any request naming it after the delete. Other
// errors pass unchanged.
func ClosedError(err error) error {
	var ae *ledger.AccountError
	if errors.As(err, &ae) && errors.Is(ae.Err, ledger.ErrAccountClosed) {
		return apierr.Newf("ACCOUNT_NOT_FOUND", "Internal account %s not found: it was closed when its customer was deleted",
			ae.AccountID)
	}
	return err
}

// CloseOwnerTx closes a customer's internal accounts inside the delete's
// transaction, or refuses with 409 when any of them holds money: posted
// balance or pending amounts, read with the balance rows locked, so no
// transfer can credit them between the check and the close.
func (s *Service) CloseOwnerTx(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string) error {
	rows, err := tx.InternalAccountsOfOwner(ctx, t, customerID)
	if err != nil || len(rows) == 0 {
		return err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.LedgerAccountID
	}
	locked, err := tx.LockLedgerAccounts(ctx, t, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		a, ok := locked[r.LedgerAccountID]
		if !ok || a.Balance == nil {
			return fmt.Errorf("accounts: ledger account %s of %s has no balance row", r.LedgerAccountID, r.ID)
		}
		if b := a.Balance; b.Posted != 0 || b.PendingDebits != 0 || b.PendingCredits != 0 {
			return apierr.Conflict("Customer " + customerID + " still holds money in internal account " + r.ID +
				"; move the balance out of its internal accounts before deleting it")
		}
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	if err := tx.CloseLedgerAccounts(ctx, t, ids, now); err != nil {
		return err
	}
	return tx.SetOwnerAccountsStatus(ctx, t, customerID, StatusClosed, now)
}
