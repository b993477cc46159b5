package pricing

import (
	"fmt"
	"math"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
)

// Bound is a pre-flight bound on the total sending amount of matching
// transfers (minSendingAmount and maxSendingAmount of exchange-rate entries).
// A zero Max.Amount means no maximum. Empty currencies mean the sending
// currency; others are converted at the cached rate (min rounds up, max down),
// which is why the bounds are approximate (R-RATE-07).
type Bound struct {
	Match
	Min Money
	Max Money
}

// SizeLimit is the single-transaction maximum of matching transfers, on the
// sending amount, the receiving amount (a withdrawal-currency limit), or
// both; zero amounts are no limit. Currencies as for Bound (an empty
// MaxReceiving currency is the receiving currency).
type SizeLimit struct {
	Match
	MaxSending   Money
	MaxReceiving Money
}

// DatedLimit is a limit in force from From on (until the next entry's From).
type DatedLimit struct {
	From time.Time
	Max  int64
}

// Limits is the configurable limit table (replace Engine.Limits to change it).
type Limits struct {
	Bounds []Bound
	Size   []SizeLimit
	// ACHSameDay is the per-entry limit of ACH_SAME_DAY payouts in US cents,
	// by effective date, earliest first.
	ACHSameDay []DatedLimit
}

// ACHSameDayRaise is when the ACH_SAME_DAY per-entry limit rises from USD
// 1,000,000 to USD 10,000,000: the start of 2027-09-17 in New York (the ACH
// operators' clock; EDT, UTC−4, on that date).
var ACHSameDayRaise = time.Date(2027, time.September, 17, 0, 0, 0, 0, time.FixedZone("EDT", -4*60*60))

// DefaultLimits is the built-in limit table:
//
//   - cross-currency transfers send at least USD 1.00 (converted); any
//     transfer sends at least one smallest unit;
//   - single-transaction maximum: USD 1,000,000 (converted) across currencies,
//     USD 100,000,000 (converted) within one currency;
//   - ACH_SAME_DAY per entry: USD 1,000,000 (100,000,000 cents), and USD
//     10,000,000 (1,000,000,000 cents) from 2027-09-17 (R-VER-05).
func DefaultLimits() Limits {
	return Limits{
		Bounds: []Bound{
			{Match: Match{Kind: CrossCurrency}, Min: USD(100)},
		},
		Size: []SizeLimit{
			{Match: Match{Kind: CrossCurrency}, MaxSending: USD(1_000_000_00)},
			{Match: Match{Kind: SameCurrency}, MaxSending: USD(100_000_000_00)},
		},
		ACHSameDay: []DatedLimit{
			{Max: 100_000_000},
			{From: ACHSameDayRaise, Max: 1_000_000_000},
		},
	}
}

// BoundFor returns the bound rule of a transfer (zero when none).
func (l Limits) BoundFor(src, dst, rail string) Bound {
	if i := best(l.Bounds, func(b Bound) Match { return b.Match }, src, dst, rail); i >= 0 {
		return l.Bounds[i]
	}
	return Bound{}
}

// SizeFor returns the size-limit rule of a transfer (zero when none).
func (l Limits) SizeFor(src, dst, rail string) SizeLimit {
	if i := best(l.Size, func(s SizeLimit) Match { return s.Match }, src, dst, rail); i >= 0 {
		return l.Size[i]
	}
	return SizeLimit{}
}

// ACHSameDayMax is the ACH_SAME_DAY per-entry limit in US cents in force at
// at (math.MaxInt64 when the table is empty or starts later).
func (l Limits) ACHSameDayMax(at time.Time) int64 {
	limit := int64(math.MaxInt64)
	for _, d := range l.ACHSameDay {
		if !at.Before(d.From) {
			limit = d.Max
		}
	}
	return limit
}

// CheckACHSameDay refuses an ACH_SAME_DAY entry of amountCents (the payout,
// in US cents) above the limit in force at at: 400
// TRANSACTION_SIZE_LIMIT_EXCEEDED naming ACH as the rail to use instead
// (R-VER-05).
func (l Limits) CheckACHSameDay(amountCents int64, at time.Time) error {
	limit := l.ACHSameDayMax(at)
	if amountCents <= limit {
		return nil
	}
	return apierr.Newf("TRANSACTION_SIZE_LIMIT_EXCEEDED",
		"An ACH_SAME_DAY entry may carry at most %s; send %s over ACH instead",
		formatMinor(limit, "USD"), formatMinor(amountCents, "USD")).
		WithDetails(map[string]any{"paymentRail": RailACHSameDay, "maxAmount": limit, "currency": "USD",
			"amount": amountCents, "alternativePaymentRail": RailACH})
}

// CheckBounds refuses a total sending amount outside [min, max]: 400
// AMOUNT_OUT_OF_RANGE with both bounds in details (R-QUOTE-38).
func CheckBounds(amount, min, max int64, sendingCurrency string) error {
	if amount >= min && amount <= max {
		return nil
	}
	which := "below the minimum"
	if amount > max {
		which = "above the maximum"
	}
	return apierr.Newf("AMOUNT_OUT_OF_RANGE", "A sending amount of %s is %s: send from %s to %s",
		formatMinor(amount, sendingCurrency), which, formatMinor(min, sendingCurrency), formatMinor(max, sendingCurrency)).
		WithDetails(map[string]any{"minSendingAmount": min, "maxSendingAmount": max, "totalSendingAmount": amount})
}

// CheckSize refuses a transfer above a single-transaction maximum: 400
// TRANSACTION_SIZE_LIMIT_EXCEEDED (R-QUOTE-39). maxSending and maxReceiving
// are already in the transfer's currencies; math.MaxInt64 means none.
func CheckSize(r Result, maxSending, maxReceiving int64) error {
	if r.TotalSendingAmount > maxSending {
		return apierr.Newf("TRANSACTION_SIZE_LIMIT_EXCEEDED",
			"A single %s→%s transfer may send at most %s; this one sends %s", r.SourceCurrency, r.DestinationCurrency,
			formatMinor(maxSending, r.SourceCurrency), formatMinor(r.TotalSendingAmount, r.SourceCurrency)).
			WithDetails(map[string]any{"maxSendingAmount": maxSending, "totalSendingAmount": r.TotalSendingAmount})
	}
	if r.TotalReceivingAmount > maxReceiving {
		return apierr.Newf("TRANSACTION_SIZE_LIMIT_EXCEEDED",
			"A single transfer may pay out at most %s; this one pays %s",
			formatMinor(maxReceiving, r.DestinationCurrency), formatMinor(r.TotalReceivingAmount, r.DestinationCurrency)).
			WithDetails(map[string]any{"maxReceivingAmount": maxReceiving, "totalReceivingAmount": r.TotalReceivingAmount})
	}
	return nil
}

// formatMinor renders an amount in smallest units as "1234.56 USD".
func formatMinor(amount int64, code string) string {
	c, ok := currency.Lookup(code)
	if !ok || c.Decimals == 0 {
		return fmt.Sprintf("%d %s", amount, code)
	}
	neg := amount < 0
	u := uint64(amount)
	if neg {
		u = -u
	}
	p := uint64(1)
	for range c.Decimals {
		p *= 10
	}
	s := fmt.Sprintf("%d.%0*d %s", u/p, c.Decimals, u%p, code)
	if neg {
		s = "-" + s
	}
	return s
}
