package quotes

import (
	"context"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/paymentdocs"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
	"github.com/paymentsd/paymentsd/internal/uma"
)

// UMA is what quotes need of the UMA capability: the counterparty's quote
// of a payment to a UMA address, and the hand-off of an executed payment to
// its settlement (in the execution's transaction).
type UMA interface {
	QuotePayment(ctx context.Context, t store.Tenant, req uma.QuoteRequest) (uma.Quoted, error)
	Submit(ctx context.Context, tx *store.Tx, p uma.Payment) error
}

// resolveUMA plans a payment to a UMA address (R-QUOTE-07, R-QUOTE-08):
// from an internal account, to the receiver of a lookup made by GET
// /receiver/uma/{receiverUmaAddress}, in the receiving currency named.
func (s *Service) resolveUMA(r *resolved, dst *DestinationIn, lookupID string) error {
	if s.UMA == nil {
		// Without the UMA capability no lookup was ever made.
		return apierr.NotFound("LOOKUP_REQUEST_NOT_FOUND", "Lookup "+lookupID)
	}
	if r.plan.Funding != FundInternal {
		return fieldErr("source", apierr.Enum, "must be an internal account for a UMA_ADDRESS destination")
	}
	r.plan.To, r.plan.Rail = ToUMA, RailUMA
	r.plan.ReceivingCurrency, r.plan.UmaAddress, r.plan.UmaLookupID = *dst.Currency, *dst.UmaAddress, lookupID
	r.dest = QuoteDestination{DestinationType: DestUMAAddress, UmaAddress: *dst.UmaAddress, Currency: *dst.Currency}
	r.destKind = paymentdocs.DestOther
	r.txSource = transactions.Source{SourceType: r.source.SourceType, AccountID: r.source.AccountID,
		Currency: r.plan.SendingCurrency, CustomerID: r.plan.SenderCustomerID}
	r.txDest = transactions.Destination{DestinationType: DestUMAAddress, Currency: r.plan.ReceivingCurrency}
	return nil
}

// RailUMA names the settlement of UMA payments.
const RailUMA = "LIGHTNING"

// umaPricer prices a UMA payment with the counterparty's quote instead of
// our own rates: the receiver quotes what it credits, we pay its invoice.
// No service fee is added to UMA payments.
func (s *Service) umaPricer(ctx context.Context, t store.Tenant, r *resolved, req Request) func(context.Context, pricing.Request) (pricing.Priced, error) {
	return func(ctx context.Context, pr pricing.Request) (pricing.Priced, error) {
		q, err := s.UMA.QuotePayment(ctx, t, uma.QuoteRequest{LookupID: r.plan.UmaLookupID, Receiver: r.plan.UmaAddress,
			Currency: r.plan.ReceivingCurrency, SendingCurrency: r.plan.SendingCurrency,
			ReceivingSide: pr.Side == pricing.Receiving, Amount: pr.Amount})
		if err != nil {
			return pricing.Priced{}, err
		}
		if q.SenderCustomerID != r.plan.SenderCustomerID && r.plan.SenderCustomerID != "" {
			return pricing.Priced{}, fieldErr("lookupId", apierr.Enum, "was made for another sending customer")
		}
		r.plan.UmaInvoice = q.Invoice
		res := pricing.Result{SourceCurrency: pr.SourceCurrency, DestinationCurrency: pr.DestinationCurrency,
			LockedCurrencySide: pr.Side, LockedCurrencyAmount: pr.Amount, TotalSendingAmount: q.SendingAmount,
			TotalReceivingAmount: q.ReceivingAmount, ExchangeRate: q.ExchangeRate}
		return pricing.Priced{Result: res, Rail: RailUMA, UpdatedAt: s.DB.Now()}, nil
	}
}
