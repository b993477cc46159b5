package pricing

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/rates"
)

// Side is which amount of a quote is fixed (lockedCurrencySide).
type Side string

// The two locked sides.
const (
	Sending   Side = "SENDING"
	Receiving Side = "RECEIVING"
)

// Fee is a resolved fee: a variable part in basis points of the total sending
// amount and a fixed part in the smallest unit of the sending currency.
type Fee struct {
	VariableBps int64 // 0..10000
	Fixed       int64 // >= 0, smallest sending unit
}

// Input is everything Price needs, already resolved to the transfer's two
// currencies (Engine resolves schedules, platform configuration and rates
// into an Input).
type Input struct {
	SourceCurrency      string
	DestinationCurrency string
	Side                Side
	Amount              int64 // the locked amount, smallest unit of the locked side's currency
	// Rate is sending major units per one receiving major unit (> 0). It is
	// ignored, and exactly 1, when the currencies are the same.
	Rate decimal.Decimal
	// Service is the service's fee, Platform the platform's (inside the fees,
	// reported as platformFeesIncluded).
	Service  Fee
	Platform Fee
	// CounterpartyFixedFee is the payout (rail) fee in the smallest unit of
	// the receiving currency; its sending equivalent, rounded up, is a fee.
	CounterpartyFixedFee int64
}

// Result is a priced transfer.
type Result struct {
	SourceCurrency       string
	DestinationCurrency  string
	LockedCurrencySide   Side
	LockedCurrencyAmount int64
	TotalSendingAmount   int64
	TotalReceivingAmount int64
	// ExchangeRate is sending major units per receiving major unit; exactly 1
	// for a same-currency transfer.
	ExchangeRate decimal.Decimal
	// FeesIncluded is every fee, in the smallest sending unit, inside
	// TotalSendingAmount; PlatformFeesIncluded is the platform's part of it.
	FeesIncluded         int64
	PlatformFeesIncluded int64
	// FixedFees is the part of FeesIncluded that does not depend on the
	// amount (service, platform and counterparty fixed fees): the exchange
	// rate entry's fees.fixed.
	FixedFees   int64
	RateDetails RateDetails
}

// RateDetails explains how the amounts were built (rateDetails on quotes and
// outgoing transactions). Multipliers and rates are exact decimals.
type RateDetails struct {
	// CounterpartyMultiplier: receiving major units paid out per sending major
	// unit converted (1 / ExchangeRate, to rates.SignificantDigits).
	CounterpartyMultiplier decimal.Decimal
	// CounterpartyFixedFee: the payout (rail) fee, smallest receiving unit.
	CounterpartyFixedFee int64
	// ServiceApiMultiplier: the share of the sending amount left by the
	// service's variable fee, 1 − ServiceApiVariableFeeRate.
	ServiceApiMultiplier decimal.Decimal
	// ServiceApiFixedFee: the service's fixed fee, smallest sending unit.
	ServiceApiFixedFee int64
	// ServiceApiVariableFeeRate: the service's variable fee as a fraction
	// (0.005 for 50 bps) of TotalSendingAmount.
	ServiceApiVariableFeeRate decimal.Decimal
	// ServiceApiVariableFeeAmount: that fraction of TotalSendingAmount, rounded
	// up, smallest sending unit.
	ServiceApiVariableFeeAmount int64
}

// MarshalJSON writes the API's rateDetails object with decimals as JSON
// numbers.
func (d RateDetails) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CounterpartyMultiplier      json.Number `json:"counterpartyMultiplier"`
		CounterpartyFixedFee        int64       `json:"counterpartyFixedFee"`
		ServiceApiMultiplier        json.Number `json:"serviceApiMultiplier"`
		ServiceApiFixedFee          int64       `json:"serviceApiFixedFee"`
		ServiceApiVariableFeeRate   json.Number `json:"serviceApiVariableFeeRate"`
		ServiceApiVariableFeeAmount int64       `json:"serviceApiVariableFeeAmount"`
	}{Number(d.CounterpartyMultiplier), d.CounterpartyFixedFee, Number(d.ServiceApiMultiplier),
		d.ServiceApiFixedFee, Number(d.ServiceApiVariableFeeRate), d.ServiceApiVariableFeeAmount})
}

// Number renders a decimal as an exact JSON number (never a string, never
// float64-rounded): use it for exchangeRate.
func Number(d decimal.Decimal) json.Number { return json.Number(d.String()) }

var (
	one       = decimal.NewFromInt(1)
	maxInt64  = decimal.NewFromInt(math.MaxInt64)
	bpsPerOne = decimal.NewFromInt(10000)
)

// Price prices a transfer under the rounding rule of the package. Errors are
// client-safe *apierr.Error values (INVALID_INPUT, INVALID_CURRENCY,
// AMOUNT_OUT_OF_RANGE, TRANSACTION_SIZE_LIMIT_EXCEEDED) except for invalid
// fee terms or rates, which are configuration mistakes (plain errors, 500).
func Price(in Input) (Result, error) { return price(in, false) }

// Estimate is Price for indicative figures (GET /exchange-rates): a SENDING
// amount that does not cover its fees, or converts to less than one smallest
// receiving unit, gives a receiving amount of 0 instead of an error.
func Estimate(in Input) (Result, error) { return price(in, true) }

func price(in Input, lenient bool) (Result, error) {
	src, ok := currency.Lookup(in.SourceCurrency)
	if !ok {
		return Result{}, apierr.Newf("INVALID_CURRENCY", "Unknown source currency %q", in.SourceCurrency)
	}
	dst, ok := currency.Lookup(in.DestinationCurrency)
	if !ok {
		return Result{}, apierr.Newf("INVALID_CURRENCY", "Unknown destination currency %q", in.DestinationCurrency)
	}
	var f apierr.Fields
	if in.Side != Sending && in.Side != Receiving {
		f.Add("lockedCurrencySide", apierr.Enum, "must be SENDING or RECEIVING")
	}
	if in.Amount < 1 {
		f.Add("lockedCurrencyAmount", apierr.Minimum, "must be a positive integer in the smallest unit of the currency")
	}
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	for name, fee := range map[string]Fee{"service": in.Service, "platform": in.Platform} {
		if fee.VariableBps < 0 || fee.VariableBps > 10000 || fee.Fixed < 0 {
			return Result{}, fmt.Errorf("pricing: %s fee %+v out of range (bps 0..10000, fixed >= 0)", name, fee)
		}
	}
	if in.CounterpartyFixedFee < 0 {
		return Result{}, fmt.Errorf("pricing: counterparty fee %d is negative", in.CounterpartyFixedFee)
	}

	rate := one
	if src.Code != dst.Code {
		if in.Rate.Sign() <= 0 {
			return Result{}, fmt.Errorf("pricing: rate %s for %s→%s is not positive", in.Rate, src.Code, dst.Code)
		}
		rate = in.Rate
	}
	// unit: smallest sending units per smallest receiving unit.
	unit := rate.Shift(int32(src.Decimals - dst.Decimals))

	counterparty := decimal.NewFromInt(in.CounterpartyFixedFee).Mul(unit).Ceil()
	fixed := decimal.NewFromInt(in.Service.Fixed).Add(decimal.NewFromInt(in.Platform.Fixed)).Add(counterparty)
	vs := decimal.NewFromInt(in.Service.VariableBps)
	vp := decimal.NewFromInt(in.Platform.VariableBps)
	variable := func(s, bps decimal.Decimal) decimal.Decimal { return s.Mul(bps).Shift(-4).Ceil() }
	feesOf := func(s decimal.Decimal) (svc, plat, total decimal.Decimal) {
		svc, plat = variable(s, vs), variable(s, vp)
		return svc, plat, fixed.Add(svc).Add(plat)
	}

	var send, recv decimal.Decimal
	switch in.Side {
	case Sending:
		send = decimal.NewFromInt(in.Amount)
		_, _, fees := feesOf(send)
		net := send.Sub(fees)
		if net.Sign() <= 0 {
			if !lenient {
				return Result{}, apierr.Newf("AMOUNT_OUT_OF_RANGE",
					"A sending amount of %d %s does not cover the fees of %s", in.Amount, src.Code, fees).
					WithDetails(map[string]any{"totalSendingAmount": in.Amount, "feesIncluded": clampInt(fees)})
			}
			recv = decimal.Zero
		} else {
			recv, _ = net.QuoRem(unit, 0) // floor: net and unit are positive
		}
		if recv.Sign() == 0 && !lenient {
			return Result{}, apierr.Newf("AMOUNT_OUT_OF_RANGE",
				"A sending amount of %d %s converts to less than one smallest unit of %s", in.Amount, src.Code, dst.Code).
				WithDetails(map[string]any{"totalSendingAmount": in.Amount})
		}
	case Receiving:
		recv = decimal.NewFromInt(in.Amount)
		need := recv.Mul(unit).Ceil() // the smallest net sending amount that buys recv
		v := vs.Add(vp)
		if v.GreaterThanOrEqual(bpsPerOne) {
			return Result{}, apierr.New("AMOUNT_OUT_OF_RANGE",
				"The variable fees take the whole sending amount; no amount can be received")
		}
		// net(S) = S − F(S) lies in (S(1−v) − fixed − 2, S(1−v) − fixed], so
		// the smallest S with net(S) ≥ need is at least lo and at most a few
		// units above it.
		lo, rem := need.Add(fixed).Mul(bpsPerOne).QuoRem(bpsPerOne.Sub(v), 0)
		if rem.Sign() > 0 {
			lo = lo.Add(one)
		}
		if lo.LessThan(one) {
			lo = one
		}
		stepsQ, _ := decimal.NewFromInt(2).Mul(bpsPerOne).QuoRem(bpsPerOne.Sub(v), 0)
		steps := stepsQ.IntPart() + 3
		found := false
		for s, i := lo, int64(0); i <= steps; s, i = s.Add(one), i+1 {
			if s.GreaterThan(maxInt64) {
				break
			}
			if _, _, fees := feesOf(s); s.Sub(fees).GreaterThanOrEqual(need) {
				send, found = s, true
				break
			}
		}
		if !found {
			if lo.GreaterThan(maxInt64) || lo.Add(decimal.NewFromInt(steps)).GreaterThan(maxInt64) {
				return Result{}, tooLarge("totalSendingAmount", src.Code)
			}
			return Result{}, fmt.Errorf("pricing: no sending amount found for %d %s from %s", in.Amount, dst.Code, src.Code)
		}
	}

	svcVar, platVar, fees := feesOf(send)
	for _, v := range []struct {
		name, code string
		d          decimal.Decimal
	}{{"totalSendingAmount", src.Code, send}, {"totalReceivingAmount", dst.Code, recv}, {"feesIncluded", src.Code, fees}, {"fixed fees", src.Code, fixed}} {
		if v.d.GreaterThan(maxInt64) {
			return Result{}, tooLarge(v.name, v.code)
		}
	}
	plat := decimal.NewFromInt(in.Platform.Fixed).Add(platVar)

	vsRate := vs.Shift(-4)
	cm := one
	if src.Code != dst.Code {
		cm = rates.RoundSignificant(one.DivRound(rate, 40), rates.SignificantDigits)
	}
	return Result{
		SourceCurrency:       src.Code,
		DestinationCurrency:  dst.Code,
		LockedCurrencySide:   in.Side,
		LockedCurrencyAmount: in.Amount,
		TotalSendingAmount:   send.IntPart(),
		TotalReceivingAmount: recv.IntPart(),
		ExchangeRate:         rate,
		FeesIncluded:         fees.IntPart(),
		PlatformFeesIncluded: plat.IntPart(),
		FixedFees:            fixed.IntPart(),
		RateDetails: RateDetails{
			CounterpartyMultiplier:      cm,
			CounterpartyFixedFee:        in.CounterpartyFixedFee,
			ServiceApiMultiplier:        one.Sub(vsRate),
			ServiceApiFixedFee:          in.Service.Fixed,
			ServiceApiVariableFeeRate:   vsRate,
			ServiceApiVariableFeeAmount: svcVar.IntPart(),
		},
	}, nil
}

// Residual is totalSendingAmount − feesIncluded − totalReceivingAmount × U in
// smallest sending units (U: smallest sending units per smallest receiving
// unit). The rounding rule keeps it in [0, max(1, U)).
func (r Result) Residual() decimal.Decimal {
	src, _ := currency.Lookup(r.SourceCurrency)
	dst, _ := currency.Lookup(r.DestinationCurrency)
	unit := r.ExchangeRate.Shift(int32(src.Decimals - dst.Decimals))
	return decimal.NewFromInt(r.TotalSendingAmount).Sub(decimal.NewFromInt(r.FeesIncluded)).
		Sub(decimal.NewFromInt(r.TotalReceivingAmount).Mul(unit))
}

// ReceivingUnit is U for the result's currencies and rate: how many smallest
// sending units one smallest receiving unit costs.
func (r Result) ReceivingUnit() decimal.Decimal {
	src, _ := currency.Lookup(r.SourceCurrency)
	dst, _ := currency.Lookup(r.DestinationCurrency)
	return r.ExchangeRate.Shift(int32(src.Decimals - dst.Decimals))
}

func tooLarge(field, code string) *apierr.Error {
	return apierr.Newf("TRANSACTION_SIZE_LIMIT_EXCEEDED",
		"The %s would exceed the largest amount the API can carry (%d smallest units of %s)", field, int64(math.MaxInt64), code)
}

func clampInt(d decimal.Decimal) int64 {
	if d.GreaterThan(maxInt64) {
		return math.MaxInt64
	}
	return d.IntPart()
}
