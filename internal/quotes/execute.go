package quotes

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
	"github.com/paymentsd/paymentsd/internal/uma"
)

// legs builds the postings of an execution (see the package comment):
// from is debited S in the sending currency, to credited R in the receiving
// currency, fees and FX in between. Zero legs are left out.
func (s *Service) legs(ctx context.Context, tx *store.Tx, t store.Tenant, q Quote, p plan, from, to string) ([]ledger.PostingSpec, error) {
	sc, rc := p.SendingCurrency, p.ReceivingCurrency
	S, F, P, R := q.TotalSendingAmount, q.FeesIncluded, q.PlatformFeesIncluded, q.TotalReceivingAmount
	sys := func(code, cur string) (string, error) {
		a, err := s.Ledger.SystemAccountTx(ctx, tx, t, code, cur)
		return a.ID, err
	}
	out := []ledger.PostingSpec{{AccountID: from, Currency: sc, Amount: -S}}
	add := func(account, cur string, amount int64) {
		if amount != 0 {
			out = append(out, ledger.PostingSpec{AccountID: account, Currency: cur, Amount: amount})
		}
	}
	service := F - P
	if sc == rc {
		// Same currency: the residual is 0 (docs/pricing.md); should it not
		// be, the service keeps it so the transfer balances.
		service += S - F - R
	}
	if service != 0 {
		acct, err := sys(ledger.CodeServiceFees, sc)
		if err != nil {
			return nil, err
		}
		add(acct, sc, service)
	}
	if P != 0 {
		acct, err := sys(ledger.CodePlatformFees, sc)
		if err != nil {
			return nil, err
		}
		add(acct, sc, P)
	}
	if sc != rc {
		fxS, err := sys(ledger.CodeFX, sc)
		if err != nil {
			return nil, err
		}
		fxR, err := sys(ledger.CodeFX, rc)
		if err != nil {
			return nil, err
		}
		add(fxS, sc, S-F)
		add(fxR, rc, -R)
	}
	add(to, rc, R)
	return out, nil
}

func moneyError(err error) error {
	var insufficient *ledger.InsufficientFundsError
	if errors.As(err, &insufficient) {
		return apierr.Newf("INSUFFICIENT_FUNDS", "Account %s has %d available and this transfer needs %d",
			insufficient.AccountID, insufficient.Available, insufficient.Debit).
			WithDetails(map[string]any{"accountId": insufficient.AccountID})
	}
	if errors.Is(err, ledger.ErrInsufficientFunds) {
		return apierr.New("INSUFFICIENT_FUNDS", "The source account does not hold enough available funds")
	}
	return accounts.ClosedError(err)
}

// executeTx executes a PENDING quote inside tx: the money movement, the
// transaction's transitions, the rails hand-off for external payouts, and
// the daily volume. It returns the quote as execution left it (PROCESSING).
//
// A stored quote's row is locked by the caller, and unrecorded is nil. A
// quote created and executed at once is not stored yet, nor is its
// transaction (unrecorded): both are inserted once, as the execution leaves
// them.
func (s *Service) executeTx(ctx context.Context, tx *store.Tx, t store.Tenant, row *store.Quote, d *document, unrecorded *transactions.New) (Quote, error) {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	q, p := d.Quote, d.Plan
	row.ExecutedAt, row.UpdatedAt, row.Status = &now, now, StatusProcessing
	d.Quote.Status = StatusProcessing
	body, err := json.Marshal(d)
	if err != nil {
		return Quote{}, err
	}
	row.Document = body
	if unrecorded == nil {
		// Marked executed first: the transitions below set the status column.
		if err := tx.UpdateQuote(ctx, *row); err != nil {
			return Quote{}, err
		}
	}
	from := p.SourceLedgerID
	if p.Funding == FundPull {
		world, err := s.Ledger.SystemAccountTx(ctx, tx, t, ledger.CodeWorld, p.SendingCurrency)
		if err != nil {
			return Quote{}, err
		}
		from = world.ID
	}
	to := p.DestLedgerID
	kind := ledger.KindTransfer
	if p.To == ToExternal || p.To == ToUMA {
		code := ledger.CodeClearing
		if p.To == ToUMA {
			code = uma.CodeClearing
		}
		clearing, err := s.Ledger.SystemAccountTx(ctx, tx, t, code, p.ReceivingCurrency)
		if err != nil {
			return Quote{}, err
		}
		to, kind = clearing.ID, ledger.KindHold
	}
	postings, err := s.legs(ctx, tx, t, q, p, from, to)
	if err != nil {
		return Quote{}, err
	}
	transfers, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{{Kind: kind, Postings: postings, Reference: q.TransactionID}})
	if err != nil {
		return Quote{}, moneyError(err)
	}
	ch := transactions.Change{Status: transactions.StatusProcessing}
	if kind == ledger.KindHold {
		ch.HoldID = transfers[0].ID
	} else {
		ch.LedgerTransferID = transfers[0].ID
	}
	changes := []transactions.Change{ch}
	if p.To == ToInternal {
		// Internal transfers (and the sandbox's simulated pull) are
		// instant: PROCESSING, then COMPLETED, in one write.
		changes = append(changes, transactions.Change{Status: transactions.StatusCompleted, SettledAt: &now})
	}
	if unrecorded == nil {
		if _, err := transactions.Transitions(ctx, tx, t, q.TransactionID, changes...); err != nil {
			return Quote{}, err
		}
	} else {
		_, status, err := transactions.RecordChanged(ctx, tx, t, *unrecorded, changes...)
		if err != nil {
			return Quote{}, err
		}
		if status != "" {
			row.Status = status
		}
		// Nothing reads it before the commit: it goes in with the
		// transaction's last statement.
		if err := tx.InsertQuoteAtCommit(*row); err != nil {
			return Quote{}, err
		}
	}
	switch p.To {
	case ToInternal:
		if p.DestCustomerID != "" && p.Funding != FundPull {
			received := q.TotalReceivingAmount
			if _, err := transactions.Record(ctx, tx, t, transactions.New{
				ID: id.New(id.Transaction), Type: transactions.TypeIncoming, Status: transactions.StatusCompleted,
				Direction: transactions.Credit, CustomerID: p.DestCustomerID, AccountID: p.DestInternalID,
				Source: transactions.Source{SourceType: SourceAccount, AccountID: p.SourceInternalID,
					Currency: p.SendingCurrency, CustomerID: p.SenderCustomerID},
				Destination: transactions.Destination{DestinationType: DestAccount, AccountID: p.DestInternalID,
					Currency: p.ReceivingCurrency},
				SentAmount: q.TotalSendingAmount, SentCurrency: p.SendingCurrency, ReceivedAmount: &received,
				ReceivedCurrency: p.ReceivingCurrency, Fees: q.FeesIncluded, Reference: q.TransactionID,
				Description: q.Description, LedgerTransferID: transfers[0].ID, SettledAt: &now, QuoteID: q.ID,
				ExchangeRate: string(q.ExchangeRate), PlatformCustomerID: p.owner(p.DestCustomerID),
			}); err != nil {
				return Quote{}, err
			}
		}
	case ToUMA:
		if err := s.UMA.Submit(ctx, tx, uma.Payment{Tenant: t, TransactionID: q.TransactionID, HoldID: transfers[0].ID,
			Invoice: p.UmaInvoice, Receiver: p.UmaAddress, ReceivingCurrency: p.ReceivingCurrency,
			ReceivingAmount: q.TotalReceivingAmount}); err != nil {
			return Quote{}, err
		}
	case ToExternal:
		submit := s.Submit
		if submit == nil {
			submit = rails.Submit
		}
		if err := submit(ctx, tx, rails.Payout{
			Tenant: t, TransactionID: q.TransactionID, QuoteID: q.ID, Rail: p.Rail, HoldID: transfers[0].ID,
			SourceAccountID: p.SourceInternalID, ExternalAccountID: p.DestExternalID,
			SendingAmount: q.TotalSendingAmount, ReceivingAmount: q.TotalReceivingAmount,
			SendingCurrency: p.SendingCurrency, ReceivingCurrency: p.ReceivingCurrency,
			RemittanceInformation: q.RemittanceInformation, StatementDescriptor: q.StatementDescriptor,
		}); err != nil {
			return Quote{}, err
		}
	}
	// Last: on PostgreSQL the day's volume rows it changes stay locked until
	// commit (store/volumes.go).
	if err := s.addVolume(ctx, tx, t, row.USDEquivalent, now); err != nil {
		return Quote{}, err
	}
	out := d.Quote
	out.Status = StatusProcessing
	return out, nil
}
