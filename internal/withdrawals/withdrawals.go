// Package withdrawals estimates crypto withdrawals: from a crypto internal
// account to an address on a chain, the network fee and the application
// fee (R-QUOTE-42). The estimate prices through package pricing exactly as
// a payout quote to an external account at that address would (same rail,
// ONCHAIN, same network fee, same platform fees), so the quote then
// charges what the estimate said.
package withdrawals

import (
	"context"
	"errors"
	"strings"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Request is the body of POST /crypto/estimate-withdrawal-fee.
type Request struct {
	InternalAccountID  *string `json:"internalAccountId"`
	Currency           *string `json:"currency"`
	CryptoNetwork      *string `json:"cryptoNetwork"`
	Amount             *int64  `json:"amount"`
	DestinationAddress *string `json:"destinationAddress"`
}

// Validate checks the fields, the address with the network's own checks.
func (r Request) Validate() error {
	var f apierr.Fields
	for name, v := range map[string]*string{"internalAccountId": r.InternalAccountID, "currency": r.Currency,
		"cryptoNetwork": r.CryptoNetwork, "destinationAddress": r.DestinationAddress} {
		if v == nil || strings.TrimSpace(*v) == "" {
			f.Add(name, apierr.Required, "is required")
		}
	}
	switch {
	case r.Amount == nil:
		f.Add("amount", apierr.Required, "is required")
	case *r.Amount < 1:
		f.Add("amount", apierr.Minimum, "must be at least 1 (the currency's smallest unit)")
	case *r.Amount > ledger.MaxAmount:
		f.Add("amount", apierr.Maximum, "must be at most %d", ledger.MaxAmount)
	}
	if r.Currency != nil && *r.Currency != "" {
		if c, ok := currency.Lookup(*r.Currency); !ok || !c.Crypto {
			f.Add("currency", apierr.Enum, "must be a crypto currency this server knows")
		}
	}
	if r.CryptoNetwork != nil && r.Currency != nil && r.DestinationAddress != nil && *r.CryptoNetwork != "" {
		externalaccounts.CheckWalletDestination(&f, *r.CryptoNetwork, *r.Currency, *r.DestinationAddress,
			"cryptoNetwork", "currency", "destinationAddress")
	}
	return f.Err()
}

// Estimate is the answer: fees in the smallest unit of the withdrawn
// currency (networkFeeAsset).
type Estimate struct {
	NetworkFee      int64  `json:"networkFee"`
	NetworkFeeAsset string `json:"networkFeeAsset"`
	ApplicationFee  int64  `json:"applicationFee"`
	TotalFee        int64  `json:"totalFee"`
	NetAmount       int64  `json:"netAmount"`
}

// Service estimates withdrawals.
type Service struct {
	DB      *store.DB
	Pricing func(env string) *pricing.Engine
	Config  func(ctx context.Context, t store.Tenant) (platformconfig.Config, error)
}

// Estimate prices the withdrawal of req.Amount (the amount leaving the
// account; fees come out of it, as a SENDING-locked quote).
func (s *Service) Estimate(ctx context.Context, t store.Tenant, req Request) (Estimate, error) {
	if err := req.Validate(); err != nil {
		return Estimate{}, err
	}
	a, err := s.DB.Read().GetInternalAccount(ctx, t, *req.InternalAccountID)
	if errors.Is(err, store.ErrNotFound) {
		return Estimate{}, apierr.NotFound("ACCOUNT_NOT_FOUND", "Internal account "+*req.InternalAccountID)
	}
	if err != nil {
		return Estimate{}, err
	}
	var f apierr.Fields
	if a.Type != accounts.TypeCrypto {
		f.Add("internalAccountId", apierr.Enum, "must be an INTERNAL_CRYPTO account (this one is %s)", a.Type)
	} else if a.Currency != *req.Currency {
		f.Add("currency", apierr.Enum, "must be the account's currency, %s", a.Currency)
	}
	if err := f.Err(); err != nil {
		return Estimate{}, err
	}
	cfg, err := s.Config(ctx, t)
	if err != nil {
		return Estimate{}, err
	}
	p, err := s.Pricing(t.Env).Quote(ctx, pricing.Request{SourceCurrency: a.Currency, DestinationCurrency: a.Currency,
		Rail: pricing.RailOnchain, Network: *req.CryptoNetwork, Side: pricing.Sending, Amount: *req.Amount,
		FeeConfigs: cfg.FeeConfigs, Currencies: cfg.SupportedCurrencies})
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{NetworkFee: p.NetworkFee, NetworkFeeAsset: a.Currency, ApplicationFee: p.FeesIncluded - p.NetworkFee,
		TotalFee: p.FeesIncluded, NetAmount: p.TotalReceivingAmount}, nil
}
