package pricing

import (
	"slices"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
)

// FeeTypeCrossCurrency is the platform fee type charged on transfers whose
// currencies differ.
const FeeTypeCrossCurrency = "CROSS_CURRENCY_TRANSACTION"

// PlatformFee is a platform's fee on one transfer, before conversion: a
// variable part in bps of the total sending amount and a fixed amount (in its
// own currency; empty means the sending currency).
type PlatformFee struct {
	VariableBps int64
	Fixed       Money
}

// PlatformFeeFromConfig picks the platform fee that applies to a transfer from
// the platform's feeConfigs: the CROSS_CURRENCY_TRANSACTION entry whose
// sourceCurrency is the transfer's, when the two currencies differ. ok is false
// when none applies.
func PlatformFeeFromConfig(configs []platformconfig.FeeConfig, src, dst string) (fee PlatformFee, ok bool) {
	if src == dst {
		return PlatformFee{}, false
	}
	for _, fc := range configs {
		if fc.FeeType == FeeTypeCrossCurrency && fc.SourceCurrency == src {
			return PlatformFee{VariableBps: fc.VariableFeeBps,
				Fixed: Money{Amount: fc.FixedFee.Amount, Currency: fc.FixedFee.Currency}}, true
		}
	}
	return PlatformFee{}, false
}

// PlatformFeeOverride is the quote request's platformFeeOverride: it replaces,
// for one transfer, whatever platform fee the configuration would charge.
// Only USD sources accept it, and its fixed fee is in the source currency.
type PlatformFeeOverride struct {
	PlatformFixedFee       *OverrideFixedFee `json:"platformFixedFee"`
	PlatformVariableFeeBps *int64            `json:"platformVariableFeeBps"`
}

// OverrideFixedFee is the fixed part of an override.
type OverrideFixedFee struct {
	Amount   *int64  `json:"amount"`
	Currency *string `json:"currency"`
}

// OverrideSourceCurrencies are the source currencies that accept an override.
var OverrideSourceCurrencies = []string{"USD"}

// Validate lists every problem of the override as INVALID_INPUT field errors
// under field (for example "platformFeeOverride"); sourceCurrency is the
// quote's. A non-USD source is refused on field itself (R-QUOTE-20).
func (o *PlatformFeeOverride) Validate(field, sourceCurrency string) error {
	var f apierr.Fields
	o.validate(&f, field, sourceCurrency)
	return f.Err()
}

// AddErrors is Validate into a collector the caller already has, so one 400
// lists the override's problems with the rest of the request's.
func (o *PlatformFeeOverride) AddErrors(f *apierr.Fields, field, sourceCurrency string) {
	o.validate(f, field, sourceCurrency)
}

func (o *PlatformFeeOverride) validate(f *apierr.Fields, field, src string) {
	if o == nil {
		return
	}
	if !slices.Contains(OverrideSourceCurrencies, src) {
		f.Add(field, apierr.Enum, "is accepted only when the source currency is USD (this quote's is %s)", src)
	}
	if o.PlatformVariableFeeBps == nil {
		f.Add(field+".platformVariableFeeBps", apierr.Required, "is required")
	} else if v := *o.PlatformVariableFeeBps; v < 0 {
		f.Add(field+".platformVariableFeeBps", apierr.Minimum, "must be at least 0")
	} else if v > 10000 {
		f.Add(field+".platformVariableFeeBps", apierr.Maximum, "must be at most 10000 basis points")
	}
	switch ff := o.PlatformFixedFee; {
	case ff == nil:
		f.Add(field+".platformFixedFee", apierr.Required, "is required")
	default:
		if ff.Amount == nil {
			f.Add(field+".platformFixedFee.amount", apierr.Required, "is required")
		} else if *ff.Amount < 0 {
			f.Add(field+".platformFixedFee.amount", apierr.Minimum, "must be at least 0")
		}
		if ff.Currency == nil {
			f.Add(field+".platformFixedFee.currency", apierr.Required, "is required")
		} else if *ff.Currency != src {
			f.Add(field+".platformFixedFee.currency", apierr.Enum, "must be the source currency, %s", src)
		}
	}
}

// Fee returns the override as a PlatformFee; call it after Validate passed.
func (o *PlatformFeeOverride) Fee() PlatformFee {
	var p PlatformFee
	if o.PlatformVariableFeeBps != nil {
		p.VariableBps = *o.PlatformVariableFeeBps
	}
	if o.PlatformFixedFee != nil && o.PlatformFixedFee.Amount != nil {
		p.Fixed.Amount = *o.PlatformFixedFee.Amount
		if o.PlatformFixedFee.Currency != nil {
			p.Fixed.Currency = *o.PlatformFixedFee.Currency
		}
	}
	return p
}
