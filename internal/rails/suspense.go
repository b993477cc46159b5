package rails

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// recordSuspense records, for each credit the ledger sent to suspense
// because its account had closed (its customer was deleted), an INCOMING
// transaction of the platform into the suspense account: the platform sees
// what arrived there, from which closed account and why (description, and
// reference the transaction whose money it is), in GET /transactions.
func recordSuspense(ctx context.Context, tx *store.Tx, t store.Tenant, transfers []ledger.Transfer, why, transactionID string) error {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	for _, tr := range transfers {
		for _, r := range tr.Redirects {
			received := r.Amount
			// A suspense account's internal and ledger ids are the same,
			// as every internal account's (accounts.newRow).
			if _, err := transactions.Record(ctx, tx, t, transactions.New{
				ID: id.New(id.Transaction), Type: transactions.TypeIncoming, Status: transactions.StatusCompleted,
				Direction: transactions.Credit, AccountID: r.SuspenseAccountID,
				Source:      transactions.Source{SourceType: transactions.SideAccount, AccountID: r.ClosedAccountID, Currency: r.Currency},
				Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: r.SuspenseAccountID, Currency: r.Currency},
				SentAmount:  r.Amount, SentCurrency: r.Currency, ReceivedAmount: &received, ReceivedCurrency: r.Currency,
				Reference: transactionID, LedgerTransferID: tr.ID, SettledAt: &now,
				Description: "Suspense: " + why + " of transaction " + transactionID + " for closed account " + r.ClosedAccountID,
			}); err != nil {
				return err
			}
		}
	}
	return nil
}
