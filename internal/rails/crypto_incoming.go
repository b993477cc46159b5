package rails

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// CryptoDeposit is money arriving over a crypto rail (LIGHTNING, ONCHAIN)
// at a deposit target of an internal account: an agent's deposit paid in
// the sandbox.
type CryptoDeposit struct {
	AccountID string
	Amount    int64
	Rail      string // Lightning or Onchain
	// Target is the invoice or address paid; Reference names the deposit.
	Target, Reference, AgentID string
}

// ReceiveCrypto credits a crypto deposit inside the caller's transaction:
// money from the outside world (WORLD) into the account and an INCOMING
// transaction, COMPLETED, recording the rail and target. It returns the
// transaction's id.
func (s *Service) ReceiveCrypto(ctx context.Context, tx *store.Tx, t store.Tenant, d CryptoDeposit) (string, error) {
	if d.Amount < 1 || (d.Rail != Lightning && d.Rail != Onchain) {
		return "", fmt.Errorf("rails: crypto deposit of %d over %q", d.Amount, d.Rail)
	}
	acct, err := tx.GetInternalAccount(ctx, t, d.AccountID)
	if errors.Is(err, store.ErrNotFound) {
		return "", apierr.NotFound("ACCOUNT_NOT_FOUND", "Internal account "+d.AccountID)
	}
	if err != nil {
		return "", err
	}
	if acct.Status != "ACTIVE" {
		return "", apierr.Conflict(fmt.Sprintf("Internal account %s is %s and cannot receive money", acct.ID, acct.Status))
	}
	txnID := id.New(id.Transaction)
	dep, err := s.deposit(ctx, tx, t, acct.LedgerAccountID, acct.Currency, d.Amount, txnID, false)
	if err != nil {
		return "", accounts.ClosedError(err)
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	received := d.Amount
	_, err = transactions.Record(ctx, tx, t, transactions.New{
		ID: txnID, Type: transactions.TypeIncoming, Status: transactions.StatusCompleted, Direction: transactions.Credit,
		CustomerID: acct.CustomerID, AccountID: acct.ID,
		Source: transactions.Source{SourceType: transactions.SideRealtimeFunding, Currency: acct.Currency,
			PaymentRail: d.Rail, RemittanceInformation: d.Target},
		Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: acct.ID, Currency: acct.Currency},
		SentAmount:  d.Amount, SentCurrency: acct.Currency, ReceivedAmount: &received, ReceivedCurrency: acct.Currency,
		Reference: d.Reference, Description: "Sandbox " + d.Rail + " deposit " + d.Reference,
		LedgerTransferID: dep.ID, SettledAt: &now, PaymentRail: d.Rail, AgentID: d.AgentID,
	})
	return txnID, err
}
