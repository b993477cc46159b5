package pricing

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/rates"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func code(err error) string {
	if e, ok := apierr.From(err); ok {
		return e.Code
	}
	if err != nil {
		return "plain: " + err.Error()
	}
	return ""
}

type want struct {
	send, recv, fees, platform, fixed int64
	rate                              string
	err                               string
}

// The worked examples of docs/pricing.md, with exact expected integers:
// same currency (R-QUOTE-22), cross currency on both locked sides
// (R-QUOTE-11), amounts of 1, 0- and 8-decimal currencies, int64 edges.
func TestPriceTable_R_QUOTE_11_R_QUOTE_22(t *testing.T) {
	usdEUR := Fee{VariableBps: 50, Fixed: 100}
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"same currency, no fee", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 10000},
			want{send: 10000, recv: 10000, rate: "1"}},
		{"same currency ignores the rate", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 10000, Rate: d("1.08")},
			want{send: 10000, recv: 10000, rate: "1"}},
		{"same currency, ACH payout fee, SENDING", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 10000, CounterpartyFixedFee: 25},
			want{send: 10000, recv: 9975, fees: 25, fixed: 25, rate: "1"}},
		{"same currency, ACH payout fee, RECEIVING", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Receiving, Amount: 10000, CounterpartyFixedFee: 25},
			want{send: 10025, recv: 10000, fees: 25, fixed: 25, rate: "1"}},
		{"same currency, variable fee rounds up", Input{SourceCurrency: "EUR", DestinationCurrency: "EUR", Side: Sending, Amount: 101, Service: Fee{VariableBps: 50}},
			want{send: 101, recv: 100, fees: 1, rate: "1"}},
		{"USD→EUR SENDING", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 10000, Rate: d("1.08"), Service: usdEUR, CounterpartyFixedFee: 20},
			want{send: 10000, recv: 9100, fees: 172, fixed: 122, rate: "1.08"}},
		{"USD→EUR RECEIVING", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Receiving, Amount: 9100, Rate: d("1.08"), Service: usdEUR, CounterpartyFixedFee: 20},
			want{send: 10000, recv: 9100, fees: 172, fixed: 122, rate: "1.08"}},
		{"USD→EUR RECEIVING one more cent", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Receiving, Amount: 9101, Rate: d("1.08"), Service: usdEUR, CounterpartyFixedFee: 20},
			// need ceil(9101×1.08)=9830; S=10002: fees 100+51+22=173, net 9829 < 9830; S=10003: net 9830.
			want{send: 10003, recv: 9101, fees: 173, fixed: 122, rate: "1.08"}},
		{"USD→EUR with platform fee", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 10000, Rate: d("1.08"), Service: usdEUR, CounterpartyFixedFee: 20, Platform: Fee{VariableBps: 30, Fixed: 50}},
			want{send: 10000, recv: 9025, fees: 252, platform: 80, fixed: 172, rate: "1.08"}},
		{"amount 1, same currency", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 1},
			want{send: 1, recv: 1, rate: "1"}},
		{"amount 1 does not cover a fee", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 1, Service: Fee{Fixed: 1}},
			want{err: "AMOUNT_OUT_OF_RANGE"}},
		{"amount 1 buys less than one receiving unit", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 1, Rate: d("1.08")},
			want{err: "AMOUNT_OUT_OF_RANGE"}},
		{"RECEIVING 1 euro cent", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Receiving, Amount: 1, Rate: d("1.08")},
			want{send: 2, recv: 1, rate: "1.08"}},
		{"RECEIVING 1 yen, one cent buys more", Input{SourceCurrency: "USD", DestinationCurrency: "JPY", Side: Receiving, Amount: 1, Rate: d("0.0067")},
			want{send: 1, recv: 1, rate: "0.0067"}},
		{"USD→JPY (0 decimals) SENDING", Input{SourceCurrency: "USD", DestinationCurrency: "JPY", Side: Sending, Amount: 10000, Rate: d("0.0067")},
			want{send: 10000, recv: 14925, rate: "0.0067"}},
		{"USD→JPY RECEIVING", Input{SourceCurrency: "USD", DestinationCurrency: "JPY", Side: Receiving, Amount: 14925, Rate: d("0.0067")},
			want{send: 10000, recv: 14925, rate: "0.0067"}},
		{"USD→BTC (8 decimals) SENDING", Input{SourceCurrency: "USD", DestinationCurrency: "BTC", Side: Sending, Amount: 10000, Rate: d("65000")},
			want{send: 10000, recv: 153846, rate: "65000"}},
		{"USD→BTC RECEIVING one bitcoin", Input{SourceCurrency: "USD", DestinationCurrency: "BTC", Side: Receiving, Amount: 100_000_000, Rate: d("65000")},
			want{send: 6_500_000, recv: 100_000_000, rate: "65000"}},
		{"BTC→USD SENDING", Input{SourceCurrency: "BTC", DestinationCurrency: "USD", Side: Sending, Amount: 100_000, Rate: d("0.0000153846153846")},
			want{send: 100_000, recv: 6500, rate: "0.0000153846153846"}},
		{"BTC→JPY fees in satoshis", Input{SourceCurrency: "BTC", DestinationCurrency: "JPY", Side: Sending, Amount: 1_000_000, Rate: d("0.000000103076923077"), Service: Fee{VariableBps: 50, Fixed: 1539}, CounterpartyFixedFee: 10},
			// U = 10.3076923077 sats/yen; fees = 1539 + 5000 + ceil(103.076923077) = 6643; net 993357 → 96370 yen.
			want{send: 1_000_000, recv: 96370, fees: 6643, fixed: 1643, rate: "0.000000103076923077"}},
		{"int64 max, same currency", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: math.MaxInt64},
			want{send: math.MaxInt64, recv: math.MaxInt64, rate: "1"}},
		{"int64 max RECEIVING plus a fee overflows", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Receiving, Amount: math.MaxInt64, CounterpartyFixedFee: 1},
			want{err: "TRANSACTION_SIZE_LIMIT_EXCEEDED"}},
		{"receiving amount beyond int64 overflows", Input{SourceCurrency: "USD", DestinationCurrency: "NGN", Side: Sending, Amount: math.MaxInt64 / 2, Rate: d("0.00065")},
			want{err: "TRANSACTION_SIZE_LIMIT_EXCEEDED"}},
		{"sending amount beyond int64 overflows", Input{SourceCurrency: "BTC", DestinationCurrency: "USD", Side: Receiving, Amount: math.MaxInt64 / 2, Rate: d("0.0000153846153846")},
			want{err: "TRANSACTION_SIZE_LIMIT_EXCEEDED"}},
		{"zero amount", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 0},
			want{err: "INVALID_INPUT"}},
		{"negative amount", Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Receiving, Amount: -5, Rate: d("1.08")},
			want{err: "INVALID_INPUT"}},
		{"bad side", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: "BOTH", Amount: 5},
			want{err: "INVALID_INPUT"}},
		{"unknown currency", Input{SourceCurrency: "XXX", DestinationCurrency: "USD", Side: Sending, Amount: 5},
			want{err: "INVALID_CURRENCY"}},
		{"variable fees take everything", Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Receiving, Amount: 5, Service: Fee{VariableBps: 6000}, Platform: Fee{VariableBps: 4000}},
			want{err: "AMOUNT_OUT_OF_RANGE"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Price(c.in)
			if c.want.err != "" {
				if code(err) != c.want.err {
					t.Fatalf("err %v, want %s", err, c.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			if got.TotalSendingAmount != w.send || got.TotalReceivingAmount != w.recv || got.FeesIncluded != w.fees ||
				got.PlatformFeesIncluded != w.platform || got.FixedFees != w.fixed || got.ExchangeRate.String() != w.rate {
				t.Fatalf("got send %d recv %d fees %d platform %d fixed %d rate %s; want %+v",
					got.TotalSendingAmount, got.TotalReceivingAmount, got.FeesIncluded, got.PlatformFeesIncluded,
					got.FixedFees, got.ExchangeRate, w)
			}
			checkIdentity(t, got)
			if c.in.Side == Sending && got.TotalSendingAmount != c.in.Amount ||
				c.in.Side == Receiving && got.TotalReceivingAmount != c.in.Amount {
				t.Fatalf("the locked side moved: %+v", got)
			}
		})
	}
}

// checkIdentity asserts the documented rounding rule:
// send = fees + recv×U + r with 0 ≤ r < max(1, U), and platform ⊆ fees.
func checkIdentity(t *testing.T, r Result) {
	t.Helper()
	u := r.ReceivingUnit()
	res := r.Residual()
	bound := decimal.Max(decimal.NewFromInt(1), u)
	if res.Sign() < 0 || !res.LessThan(bound) {
		t.Fatalf("residual %s outside [0, %s): %+v", res, bound, r)
	}
	if r.LockedCurrencySide == Sending && !res.LessThan(u) {
		t.Fatalf("SENDING residual %s is a whole receiving unit (%s) or more: %+v", res, u, r)
	}
	if r.LockedCurrencySide == Receiving && !res.LessThan(decimal.NewFromInt(1)) {
		t.Fatalf("RECEIVING residual %s is a whole sending unit or more: %+v", res, r)
	}
	if r.SourceCurrency == r.DestinationCurrency && !res.IsZero() {
		t.Fatalf("same-currency residual %s", res)
	}
	if r.PlatformFeesIncluded < 0 || r.PlatformFeesIncluded > r.FeesIncluded || r.FixedFees > r.FeesIncluded {
		t.Fatalf("platform %d / fixed %d not inside fees %d", r.PlatformFeesIncluded, r.FixedFees, r.FeesIncluded)
	}
}

// rateDetails carries the service's variable rate, its amount, the fixed
// fees and the multipliers, as JSON numbers (R-TXN-12 types).
func TestRateDetails_R_TXN_12(t *testing.T) {
	r, err := Price(Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 10000, Rate: d("1.08"),
		Service: Fee{VariableBps: 50, Fixed: 100}, CounterpartyFixedFee: 20, Platform: Fee{VariableBps: 30, Fixed: 50}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := r.RateDetails.MarshalJSON()
	want := `{"counterpartyMultiplier":0.925925925926,"counterpartyFixedFee":20,"serviceApiMultiplier":0.995,` +
		`"serviceApiFixedFee":100,"serviceApiVariableFeeRate":0.005,"serviceApiVariableFeeAmount":50}`
	if string(got) != want {
		t.Fatalf("rateDetails\n got %s\nwant %s", got, want)
	}
	same, _ := Price(Input{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 100})
	if !same.RateDetails.CounterpartyMultiplier.Equal(one) || !same.RateDetails.ServiceApiMultiplier.Equal(one) {
		t.Fatalf("same currency details %+v", same.RateDetails)
	}
}

// The indicative price of GET /exchange-rates never fails on a small amount:
// it reports a receiving amount of 0 and the fees.
func TestEstimateSmallAmount_R_RATE_07(t *testing.T) {
	in := Input{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 50, Rate: d("1.08"), Service: Fee{VariableBps: 50, Fixed: 100}}
	if _, err := Price(in); code(err) != "AMOUNT_OUT_OF_RANGE" {
		t.Fatalf("Price: %v", err)
	}
	r, err := Estimate(in)
	if err != nil || r.TotalReceivingAmount != 0 || r.FeesIncluded != 101 || r.TotalSendingAmount != 50 {
		t.Fatalf("Estimate: %+v %v", r, err)
	}
}

// Property: over thousands of random pairs (every currency, sandbox rates),
// amounts (1 to 10^15, log-uniform), locked sides and fees, the locked side
// is exact, the identity sent == received × rate + fees holds within the
// documented rounding, and a RECEIVING lock's sending amount is the smallest
// that delivers the locked amount (R-QUOTE-11, R-QUOTE-22).
func TestPriceIdentityProperty_R_QUOTE_11(t *testing.T) {
	src := rates.NewSandbox(nil)
	codes := currency.Codes()
	rng := rand.New(rand.NewPCG(20251013, 5))
	n := 5000
	if testing.Short() {
		n = 500
	}
	checked := 0
	for i := 0; i < n; i++ {
		from, to := codes[rng.IntN(len(codes))], codes[rng.IntN(len(codes))]
		if rng.IntN(5) == 0 {
			to = from
		}
		q, err := src.Rate(t.Context(), from, to)
		if err != nil {
			t.Fatal(err)
		}
		in := Input{
			SourceCurrency: from, DestinationCurrency: to, Rate: q.Mid,
			Side:   []Side{Sending, Receiving}[rng.IntN(2)],
			Amount: int64(math.Pow(10, rng.Float64()*15)),
		}
		if rng.IntN(3) > 0 {
			in.Service = Fee{VariableBps: rng.Int64N(300), Fixed: rng.Int64N(500)}
			in.Platform = Fee{VariableBps: rng.Int64N(100), Fixed: rng.Int64N(100)}
			in.CounterpartyFixedFee = rng.Int64N(1000)
		}
		r, err := Price(in)
		if err != nil {
			switch code(err) {
			case "AMOUNT_OUT_OF_RANGE", "TRANSACTION_SIZE_LIMIT_EXCEEDED":
				continue // too small for the fees, or beyond int64
			}
			t.Fatalf("%+v: %v", in, err)
		}
		checked++
		checkIdentity(t, r)
		switch in.Side {
		case Sending:
			if r.TotalSendingAmount != in.Amount {
				t.Fatalf("SENDING moved: %+v", r)
			}
		case Receiving:
			if r.TotalReceivingAmount != in.Amount {
				t.Fatalf("RECEIVING moved: %+v", r)
			}
			// Minimality: one unit less does not deliver the locked amount.
			less := in
			less.Side, less.Amount = Sending, r.TotalSendingAmount-1
			if less.Amount >= 1 {
				if lr, err := Estimate(less); err == nil && lr.TotalReceivingAmount >= in.Amount {
					t.Fatalf("%d %s already delivers %d %s: %+v", less.Amount, from, lr.TotalReceivingAmount, to, r)
				}
			}
			// And the sending amount itself delivers at least the locked amount.
			same := in
			same.Side, same.Amount = Sending, r.TotalSendingAmount
			if sr, err := Price(same); err != nil || sr.TotalReceivingAmount < in.Amount || sr.FeesIncluded != r.FeesIncluded {
				t.Fatalf("sending %d %s back: %+v %v (quote %+v)", same.Amount, from, sr, err, r)
			}
		}
	}
	if checked < n*3/4 {
		t.Fatalf("only %d of %d random cases priced; the generator is off", checked, n)
	}
}
