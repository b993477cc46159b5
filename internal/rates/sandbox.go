package rates

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// SandboxUSDPrices is the sandbox's fixed table: the price of one major unit
// of each currency in US dollars, realistic enough for demos and fixed so that
// tests can assert exact amounts. Every currency of internal/currency has an
// entry (a test keeps it so).
var SandboxUSDPrices = map[string]string{
	"USD":  "1",
	"EUR":  "1.08",
	"GBP":  "1.27",
	"MXN":  "0.058",
	"BRL":  "0.2",
	"INR":  "0.012",
	"PHP":  "0.0178",
	"NGN":  "0.00065",
	"CNY":  "0.138",
	"CAD":  "0.735",
	"COP":  "0.00025",
	"KES":  "0.0077",
	"SGD":  "0.74",
	"HKD":  "0.128",
	"AUD":  "0.66",
	"CHF":  "1.13",
	"ZAR":  "0.054",
	"JPY":  "0.0067",
	"BTC":  "65000",
	"USDC": "1",
	"USDT": "1",
	"USDB": "1",
	"SOL":  "150",
}

// Sandbox answers every pair of its table. A pair through USD is the ratio of
// the two dollar prices, rounded to SignificantDigits; a pair with USD on the
// sending side is the table price itself, exactly.
type Sandbox struct {
	prices map[string]decimal.Decimal
	now    func() time.Time
}

// NewSandbox returns the sandbox source over SandboxUSDPrices. now stamps
// AsOf (nil means time.Now).
func NewSandbox(now func() time.Time) *Sandbox {
	return NewSandboxWith(SandboxUSDPrices, now)
}

// NewSandboxWith returns a sandbox source over another table of dollar
// prices (tests use it to leave a currency out). It panics on a price that is
// not a positive decimal: the table is code, not input.
func NewSandboxWith(usdPrices map[string]string, now func() time.Time) *Sandbox {
	if now == nil {
		now = time.Now
	}
	s := &Sandbox{prices: make(map[string]decimal.Decimal, len(usdPrices)), now: now}
	for code, p := range usdPrices {
		d, err := decimal.NewFromString(p)
		if err != nil || d.Sign() <= 0 {
			panic(fmt.Sprintf("rates: sandbox price of %s is %q, want a positive decimal", code, p))
		}
		s.prices[code] = d
	}
	return s
}

// Rate implements Source.
func (s *Sandbox) Rate(ctx context.Context, from, to string) (Quote, error) {
	if err := ctx.Err(); err != nil {
		return Quote{}, err
	}
	pf, okf := s.prices[from]
	pt, okt := s.prices[to]
	if !okf || !okt {
		return Quote{}, Unavailable(from, to)
	}
	var mid decimal.Decimal
	switch {
	case from == to:
		mid = decimal.NewFromInt(1)
	case pf.Equal(decimal.NewFromInt(1)):
		mid = pt
	default:
		// 40 places keep far more than SignificantDigits for any ratio of
		// the table's magnitudes.
		mid = RoundSignificant(pt.DivRound(pf, 40), SignificantDigits)
	}
	if mid.Sign() <= 0 {
		return Quote{}, errNonPositive
	}
	return Quote{From: from, To: to, Mid: mid, AsOf: s.now().UTC()}, nil
}
