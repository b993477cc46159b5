package quotes

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/store"
)

// LookupAmount is the sending amount a lookup prices its estimate at.
const LookupAmount = 10000

// SupportedCurrency is one currency a receiver accepts (Part A "Receiver
// lookup result"): min and max in the receiving smallest unit, the sending
// bounds in the sending smallest unit; all approximate, priced off the
// cached rate.
type SupportedCurrency struct {
	Currency              currency.Currency `json:"currency"`
	EstimatedExchangeRate json.Number       `json:"estimatedExchangeRate"`
	Min                   int64             `json:"min"`
	Max                   int64             `json:"max"`
	MinSendingAmount      int64             `json:"minSendingAmount,omitempty"`
	MaxSendingAmount      int64             `json:"maxSendingAmount,omitempty"`
}

// Lookup is the answer of GET /receiver/external-account/{accountId}.
type Lookup struct {
	AccountID               string                             `json:"accountId"`
	LookupID                string                             `json:"lookupId"`
	SendingCurrency         string                             `json:"sendingCurrency"`
	SupportedCurrencies     []SupportedCurrency                `json:"supportedCurrencies"`
	RequiredPayerDataFields []platformconfig.CounterpartyField `json:"requiredPayerDataFields"`
}

// LookupExternalAccount describes what paying an external account takes
// (R-QUOTE receiver lookup). sendingCurrency defaults to the customer's only
// currency, or USD. The lookupId is informational: quotes to external
// accounts do not need it (only UMA destinations do).
func (s *Service) LookupExternalAccount(ctx context.Context, t store.Tenant, accountID, customerID, sendingCurrency string) (Lookup, error) {
	ea, err := s.External.Lookup(ctx, t, accountID)
	if err != nil {
		return Lookup{}, err
	}
	if customerID != "" {
		if _, _, err := s.CustomerTerms(ctx, t, customerID); err != nil {
			return Lookup{}, err
		}
	}
	if sendingCurrency == "" {
		sendingCurrency = "USD"
		if customerID != "" {
			owned, err := s.DB.Read().InternalAccountsOfOwner(ctx, t, customerID)
			if err != nil {
				return Lookup{}, err
			}
			var curs []string
			for _, a := range owned {
				if !slices.Contains(curs, a.Currency) {
					curs = append(curs, a.Currency)
				}
			}
			if len(curs) == 1 {
				sendingCurrency = curs[0]
			}
		}
	} else if _, ok := currency.Lookup(sendingCurrency); !ok {
		return Lookup{}, fieldErr("sendingCurrency", apierr.Enum, "is not a currency this server knows")
	}
	cfg, err := s.Config(ctx, t)
	if err != nil {
		return Lookup{}, err
	}
	eng := s.Pricing(t.Env)
	req := pricing.Request{SourceCurrency: sendingCurrency, DestinationCurrency: ea.Currency, Side: pricing.Sending,
		Amount: LookupAmount, FeeConfigs: cfg.FeeConfigs, Currencies: cfg.SupportedCurrencies}
	p, err := eng.Estimate(ctx, req)
	if err != nil {
		return Lookup{}, err
	}
	receiveAt := func(amount int64) int64 {
		r := req
		r.Amount = amount
		if x, err := eng.Estimate(ctx, r); err == nil && x.TotalReceivingAmount > 0 {
			return x.TotalReceivingAmount
		}
		return 1
	}
	recv, _ := currency.Lookup(ea.Currency)
	sc := SupportedCurrency{Currency: recv, EstimatedExchangeRate: pricing.Number(p.ExchangeRate),
		MinSendingAmount: p.MinSendingAmount, MaxSendingAmount: p.MaxSendingAmount}
	sc.Min, sc.Max = receiveAt(p.MinSendingAmount), receiveAt(p.MaxSendingAmount)
	if sc.Max < sc.Min {
		sc.Max = sc.Min
	}
	fields := []platformconfig.CounterpartyField{}
	for _, c := range cfg.SupportedCurrencies {
		if c.CurrencyCode == ea.Currency {
			fields = append(fields, c.RequiredCounterpartyFields...)
		}
	}
	return Lookup{AccountID: ea.ID, LookupID: id.New(id.Lookup), SendingCurrency: sendingCurrency,
		SupportedCurrencies: []SupportedCurrency{sc}, RequiredPayerDataFields: fields}, nil
}
