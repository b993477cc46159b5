package pricing

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/rates"
)

// Engine prices transfers against a rate source, a fee schedule and limits.
// Its fields may be replaced before use (configuration, tests); it holds no
// other state and is safe for concurrent use.
type Engine struct {
	Rates    rates.Source // usually a *rates.Cache
	Schedule Schedule
	Limits   Limits
	// Now decides which dated limit applies when Request.At is zero (nil
	// means time.Now).
	Now func() time.Time
}

// NewEngine returns an engine over src with the built-in schedule and limits.
func NewEngine(src rates.Source, now func() time.Time) *Engine {
	return &Engine{Rates: src, Schedule: DefaultSchedule(), Limits: DefaultLimits(), Now: now}
}

// Request is a transfer to price.
type Request struct {
	SourceCurrency      string
	DestinationCurrency string
	// Rail is the destination payment rail: RailInternal for a book transfer,
	// empty for DefaultRail(DestinationCurrency).
	Rail string
	// Network is the chain of an on-chain payout (SOLANA, ETHEREUM, …):
	// its network fee is added to the payout fee. Empty: none.
	Network string
	Side    Side
	Amount  int64 // locked amount, smallest unit of the locked side's currency
	// FeeConfigs are the platform's configured fees (GET /config feeConfigs).
	FeeConfigs []platformconfig.FeeConfig
	// Override is the quote's platformFeeOverride, if any; it replaces
	// FeeConfigs and is refused for non-USD sources.
	Override *PlatformFeeOverride
	// Currencies are the platform's supportedCurrencies: the source
	// currency's minAmount and maxAmount narrow the sending bounds.
	Currencies []platformconfig.CurrencyConfig
	// At is when the transfer would be sent, for dated limits (zero: now).
	At time.Time
}

// Priced is a priced transfer with what the API reports around it.
type Priced struct {
	Result
	Rail string
	// NetworkFee is the network fee inside the counterparty fee, in the
	// smallest receiving unit (0 off chain).
	NetworkFee int64
	// MinSendingAmount and MaxSendingAmount are the pre-flight bounds on the
	// total sending amount, approximate for cross-currency transfers (priced
	// off the cached rate; R-RATE-07). MaxSendingAmount includes the
	// single-transaction maximum.
	MinSendingAmount int64
	MaxSendingAmount int64
	// UpdatedAt is when the rate was observed (the entry's updatedAt).
	UpdatedAt time.Time
}

// Quote prices a transfer for a quote and enforces every limit, in this
// order: request validity (INVALID_INPUT, INVALID_CURRENCY), rate
// (QUOTE_RATE_UNAVAILABLE), pricing (AMOUNT_OUT_OF_RANGE when the amount does
// not cover the fees; TRANSACTION_SIZE_LIMIT_EXCEEDED beyond int64), the
// single-transaction maximum (TRANSACTION_SIZE_LIMIT_EXCEEDED), the pre-flight
// bounds (AMOUNT_OUT_OF_RANGE) and, on ACH_SAME_DAY, the per-entry limit
// (TRANSACTION_SIZE_LIMIT_EXCEEDED).
func (e *Engine) Quote(ctx context.Context, req Request) (Priced, error) {
	p, lim, err := e.price(ctx, req, false)
	if err != nil {
		return Priced{}, err
	}
	if err := CheckSize(p.Result, lim.sizeSending, lim.sizeReceiving); err != nil {
		return Priced{}, err
	}
	if err := CheckBounds(p.TotalSendingAmount, lim.boundMin, lim.boundMax, p.SourceCurrency); err != nil {
		return Priced{}, err
	}
	if p.Rail == RailACHSameDay && p.DestinationCurrency == "USD" {
		at := req.At
		if at.IsZero() {
			at = e.now()
		}
		if err := e.Limits.CheckACHSameDay(p.TotalReceivingAmount, at); err != nil {
			return Priced{}, err
		}
	}
	return p, nil
}

// Estimate prices a SENDING amount for an exchange-rate entry: the same
// amounts as Quote, no limit enforced, and a receiving amount of 0 when the
// amount does not cover the fees.
func (e *Engine) Estimate(ctx context.Context, req Request) (Priced, error) {
	p, _, err := e.price(ctx, req, true)
	return p, err
}

// limitsOf are a transfer's limits in its own currencies; math.MaxInt64
// means none.
type limitsOf struct {
	boundMin, boundMax         int64
	sizeSending, sizeReceiving int64
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) price(ctx context.Context, req Request, lenient bool) (Priced, limitsOf, error) {
	src, dst := req.SourceCurrency, req.DestinationCurrency
	var f apierr.Fields
	if _, ok := currency.Lookup(src); !ok {
		f.Add("sourceCurrency", apierr.Enum, "is not a currency this server knows")
	}
	if _, ok := currency.Lookup(dst); !ok {
		f.Add("destinationCurrency", apierr.Enum, "is not a currency this server knows")
	}
	req.Override.AddErrors(&f, "platformFeeOverride", src)
	if err := f.Err(); err != nil {
		return Priced{}, limitsOf{}, err
	}
	rail := req.Rail
	if rail == "" {
		rail = DefaultRail(dst)
	}

	q, err := e.Rates.Rate(ctx, src, dst)
	if err != nil {
		return Priced{}, limitsOf{}, err
	}

	// Resolve the fees into the transfer's currencies.
	svc := e.Schedule.ServiceFor(src, dst, rail)
	svcFixed, err := e.convert(ctx, svc.Fixed, src, true)
	if err != nil {
		return Priced{}, limitsOf{}, err
	}
	payout := e.Schedule.PayoutFor(src, dst, rail)
	cpFixed, err := e.convert(ctx, payout.Fixed, dst, true)
	if err != nil {
		return Priced{}, limitsOf{}, err
	}
	netFee, err := e.convert(ctx, e.Schedule.NetworkFor(req.Network), dst, true)
	if err != nil {
		return Priced{}, limitsOf{}, err
	}
	cpFixed = cpFixed.Add(netFee)
	var plat PlatformFee
	if req.Override != nil {
		plat = req.Override.Fee()
	} else if pf, ok := PlatformFeeFromConfig(req.FeeConfigs, src, dst); ok {
		plat = pf
	}
	platFixed, err := e.convert(ctx, plat.Fixed, src, true)
	if err != nil {
		return Priced{}, limitsOf{}, err
	}
	for _, d := range []decimal.Decimal{svcFixed, cpFixed, platFixed} {
		if d.GreaterThan(maxInt64) {
			return Priced{}, limitsOf{}, fmt.Errorf("pricing: a fixed fee of %s→%s does not fit an int64", src, dst)
		}
	}
	in := Input{
		SourceCurrency: src, DestinationCurrency: dst, Side: req.Side, Amount: req.Amount, Rate: q.Mid,
		Service:              Fee{VariableBps: svc.VariableBps, Fixed: svcFixed.IntPart()},
		Platform:             Fee{VariableBps: plat.VariableBps, Fixed: platFixed.IntPart()},
		CounterpartyFixedFee: cpFixed.IntPart(),
	}
	var res Result
	if lenient {
		res, err = Estimate(in)
	} else {
		res, err = Price(in)
	}
	if err != nil {
		return Priced{}, limitsOf{}, err
	}

	lim, err := e.limits(ctx, req, rail, res.ReceivingUnit())
	if err != nil {
		return Priced{}, limitsOf{}, err
	}
	lo, hi := lim.boundMin, lim.boundMax
	if lim.sizeSending < hi {
		hi = lim.sizeSending
	}
	if lim.sizeReceiving != math.MaxInt64 {
		// Priced off the rate, fees aside: approximate, as documented.
		if approx := clampInt(decimal.NewFromInt(lim.sizeReceiving).Mul(res.ReceivingUnit()).Floor()); approx < hi {
			hi = approx
		}
	}
	return Priced{Result: res, Rail: rail, NetworkFee: netFee.IntPart(), MinSendingAmount: lo, MaxSendingAmount: hi,
		UpdatedAt: q.AsOf}, lim, nil
}

// limits resolves the transfer's bound and size-limit rules, and the
// platform's bounds for the source currency, into its currencies.
func (e *Engine) limits(ctx context.Context, req Request, rail string, unit decimal.Decimal) (limitsOf, error) {
	src, dst := req.SourceCurrency, req.DestinationCurrency
	l := limitsOf{boundMin: 1, boundMax: math.MaxInt64, sizeSending: math.MaxInt64, sizeReceiving: math.MaxInt64}
	b := e.Limits.BoundFor(src, dst, rail)
	if b.Min.Amount > 0 {
		v, err := e.convert(ctx, b.Min, src, true)
		if err != nil {
			return l, err
		}
		l.boundMin = max(l.boundMin, clampInt(v))
	}
	if b.Max.Amount > 0 {
		v, err := e.convert(ctx, b.Max, src, false)
		if err != nil {
			return l, err
		}
		l.boundMax = min(l.boundMax, clampInt(v))
	}
	for _, c := range req.Currencies {
		if c.CurrencyCode == src {
			l.boundMin = max(l.boundMin, c.MinAmount)
			if c.MaxAmount > 0 {
				l.boundMax = min(l.boundMax, c.MaxAmount)
			}
		}
	}
	s := e.Limits.SizeFor(src, dst, rail)
	if s.MaxSending.Amount > 0 {
		v, err := e.convert(ctx, s.MaxSending, src, false)
		if err != nil {
			return l, err
		}
		l.sizeSending = clampInt(v)
	}
	if s.MaxReceiving.Amount > 0 {
		v, err := e.convert(ctx, s.MaxReceiving, dst, false)
		if err != nil {
			return l, err
		}
		l.sizeReceiving = clampInt(v)
	}
	return l, nil
}

// convert expresses m in the smallest unit of to, at the cached rate, rounded
// up or down (an empty m.Currency is already to).
func (e *Engine) convert(ctx context.Context, m Money, to string, up bool) (decimal.Decimal, error) {
	if m.Amount == 0 || m.Currency == "" || m.Currency == to {
		return decimal.NewFromInt(m.Amount), nil
	}
	from, ok1 := currency.Lookup(m.Currency)
	dst, ok2 := currency.Lookup(to)
	if !ok1 || !ok2 {
		return decimal.Zero, fmt.Errorf("pricing: cannot convert %s to %s: unknown currency", m.Currency, to)
	}
	// Rate(to, m.Currency).Mid is the price of one m.Currency unit in units
	// of to.
	q, err := e.Rates.Rate(ctx, to, m.Currency)
	if err != nil {
		return decimal.Zero, err
	}
	v := decimal.NewFromInt(m.Amount).Mul(q.Mid.Shift(int32(dst.Decimals - from.Decimals)))
	if up {
		return v.Ceil(), nil
	}
	return v.Floor(), nil
}

// Convert expresses an amount in another currency's smallest unit at the
// cached rate, rounding up (fees, minimums) or down (maximums).
func (e *Engine) Convert(ctx context.Context, m Money, to string, up bool) (int64, error) {
	v, err := e.convert(ctx, m, to, up)
	if err != nil {
		return 0, err
	}
	return clampInt(v), nil
}
