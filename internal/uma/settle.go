package uma

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// CodeClearing is the SYSTEM ledger account, per currency, that stands for
// money in flight over the UMA settlement network (Lightning).
const CodeClearing = "CLEARING_UMA"

// SettleHTLC is the receiving node's side of a payment: in one database
// transaction it credits the invoice's account with the quoted receiving
// amount (from the UMA clearing account, through the ledger), records the
// INCOMING transaction (its INCOMING_PAYMENT.COMPLETED webhook) and marks the
// invoice paid; then it reveals the preimage. A second HTLC for a paid
// invoice gets the preimage again and moves nothing.
func (s *Service) SettleHTLC(ctx context.Context, h HTLC) (HTLCResult, error) {
	var preimage string
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		inv, err := tx.GetUmaInvoice(ctx, h.PaymentHash, true)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("REFERENCE_NOT_FOUND", "Invoice "+truncate(h.PaymentHash, 64))
		}
		if err != nil {
			return err
		}
		if err := sandboxOnly(inv.Tenant.Env); err != nil {
			return err
		}
		if inv.Status == "PENDING" {
			if err := s.credit(ctx, tx, inv, h); err != nil {
				return err
			}
		}
		preimage, err = s.openPreimage(inv)
		return err
	})
	return HTLCResult{Preimage: preimage}, err
}

// credit settles a PENDING invoice.
func (s *Service) credit(ctx context.Context, tx *store.Tx, inv store.UmaInvoice, h HTLC) error {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	if !now.Before(inv.ExpiresAt) {
		return apierr.New("QUOTE_EXPIRED", "The invoice expired before it was paid")
	}
	if h.AmountMsat < inv.AmountMsat {
		return apierr.Newf("INVALID_AMOUNT", "The HTLC carries %d msat; the invoice is for %d", h.AmountMsat, inv.AmountMsat)
	}
	t := inv.Tenant
	acct, err := tx.GetInternalAccount(ctx, t, inv.AccountID)
	if err != nil {
		return err
	}
	clearing, err := s.Ledger.SystemAccountTx(ctx, tx, t, CodeClearing, inv.Currency)
	if err != nil {
		return err
	}
	txID := id.New(id.Transaction)
	transfers, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{{Reference: txID, ToSuspense: true, Postings: []ledger.PostingSpec{
		{AccountID: clearing.ID, Currency: inv.Currency, Amount: -inv.ReceivingAmount},
		{AccountID: acct.LedgerAccountID, Currency: inv.Currency, Amount: inv.ReceivingAmount},
	}}})
	if err != nil {
		return accounts.ClosedError(err)
	}
	received := inv.ReceivingAmount
	if _, err := transactions.Record(ctx, tx, t, transactions.New{
		ID: txID, Type: transactions.TypeIncoming, Status: transactions.StatusCompleted,
		Direction: transactions.Credit, CustomerID: inv.CustomerID, AccountID: acct.ID,
		Source: transactions.Source{SourceType: "UMA_ADDRESS", Currency: inv.Currency, AccountIdentifier: inv.SenderAddress,
			RemittanceInformation: "UMA payment from " + inv.SenderAddress},
		Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: acct.ID, Currency: inv.Currency},
		SentAmount:  inv.ReceivingAmount, SentCurrency: inv.Currency, ReceivedAmount: &received, ReceivedCurrency: inv.Currency,
		Reference: inv.PaymentHash, Description: "UMA payment to " + inv.ReceiverAddress,
		LedgerTransferID: transfers[0].ID, SettledAt: &now,
	}); err != nil {
		return err
	}
	return tx.MarkUmaInvoicePaid(ctx, inv.PaymentHash, txID, now)
}

func (s *Service) openPreimage(inv store.UmaInvoice) (string, error) {
	sealed, err := base64.StdEncoding.DecodeString(inv.SealedPreimage)
	if err != nil {
		return "", err
	}
	p, err := s.Sealer.Open(sealed, []byte("uma-preimage|"+inv.PaymentHash))
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(p), nil
}
