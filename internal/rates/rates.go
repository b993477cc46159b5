// Package rates is the FX rate-source adapter: a Source answers the price of
// one currency in another, a Sandbox answers from a fixed table, and a Cache
// keeps each answer for about five minutes (Part B, Limits: exchange-rate
// cache; R-RATE-05).
//
// The one convention of the package, which is also the API's exchangeRate
// convention: Rate(ctx, from, to).Mid is the price of ONE major unit of `to`
// expressed in major units of `from` — how many sending-currency units buy one
// receiving-currency unit. Rate(ctx, "USD", "EUR").Mid == 1.08 means one euro
// costs 1.08 dollars. A same-currency pair is exactly 1.
//
// Rates are exact decimals (github.com/shopspring/decimal), never float64.
// Amount arithmetic on top of them lives in internal/pricing.
package rates

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// CodeUnavailable is the API error code for a pair without a rate.
const CodeUnavailable = "QUOTE_RATE_UNAVAILABLE"

// SignificantDigits is the precision of derived (cross) rates: enough for an
// exact amount on any int64 the API can carry at the sizes the limits allow,
// and still exactly representable by clients that parse JSON numbers as
// IEEE doubles to within their own precision.
const SignificantDigits = 12

// Quote is one observation of a rate.
type Quote struct {
	From string // sending currency code
	To   string // receiving currency code
	// Mid is the mid-market price of one major unit of To in major units of
	// From (sending units per receiving unit). Always > 0.
	Mid decimal.Decimal
	// AsOf is when the source produced the rate; the API reports it as
	// updatedAt.
	AsOf time.Time
}

// Source answers rates. Implementations must be safe for concurrent use and
// return an error carrying QUOTE_RATE_UNAVAILABLE (see Unavailable) when they
// have no rate for a pair.
type Source interface {
	Rate(ctx context.Context, from, to string) (Quote, error)
}

// Unavailable is the client-safe error for a pair without a rate: 400
// QUOTE_RATE_UNAVAILABLE.
func Unavailable(from, to string) *apierr.Error {
	return apierr.Newf(CodeUnavailable, "No exchange rate is available from %s to %s", from, to).
		WithDetails(map[string]any{"sourceCurrency": from, "destinationCurrency": to})
}

// IsUnavailable reports whether err says a pair has no rate.
func IsUnavailable(err error) bool {
	e, ok := apierr.From(err)
	return ok && e.Code == CodeUnavailable
}

// RoundSignificant rounds d (half away from zero) to n significant digits.
func RoundSignificant(d decimal.Decimal, n int) decimal.Decimal {
	if d.IsZero() {
		return d
	}
	// The most significant digit of d is at power msd of ten.
	msd := int32(d.NumDigits()) + d.Exponent() - 1
	return d.Round(int32(n) - 1 - msd)
}

// Unconfigured is the production source when no rate partner is configured:
// it answers same-currency pairs (exactly 1, no FX involved) and refuses every
// other pair with QUOTE_RATE_UNAVAILABLE instead of pretending with sandbox
// numbers.
type Unconfigured struct {
	Now func() time.Time
}

// Rate implements Source.
func (u Unconfigured) Rate(_ context.Context, from, to string) (Quote, error) {
	if from == to {
		now := time.Now
		if u.Now != nil {
			now = u.Now
		}
		return Quote{From: from, To: to, Mid: decimal.NewFromInt(1), AsOf: now().UTC()}, nil
	}
	return Quote{}, apierr.Newf(CodeUnavailable,
		"No exchange rate is available from %s to %s: this environment has no FX rate source configured", from, to).
		WithDetails(map[string]any{"sourceCurrency": from, "destinationCurrency": to})
}

var errNonPositive = errors.New("rates: source returned a non-positive rate")
