package pricing

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/rates"
)

var t0 = time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC)

func sandboxEngine() *Engine {
	now := func() time.Time { return t0 }
	return NewEngine(rates.NewCache(rates.NewSandbox(now), 0, now), now)
}

func quote(t *testing.T, e *Engine, req Request) Priced {
	t.Helper()
	p, err := e.Quote(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	checkIdentity(t, p.Result)
	return p
}

func quoteErr(t *testing.T, e *Engine, req Request) *apierr.Error {
	t.Helper()
	_, err := e.Quote(context.Background(), req)
	ae, ok := apierr.From(err)
	if !ok {
		t.Fatalf("%+v: want an API error, got %v", req, err)
	}
	return ae
}

func usdFee(bps, fixed int64) []platformconfig.FeeConfig {
	return []platformconfig.FeeConfig{{FeeType: FeeTypeCrossCurrency, SourceCurrency: "USD", VariableFeeBps: bps,
		FixedFee: platformconfig.FixedFee{Amount: fixed, Currency: "USD"}}}
}

func i64(v int64) *int64   { return &v }
func str(v string) *string { return &v }

// The default schedule: same-currency internal transfers are free, US rails
// charge their payout fee, cross-currency pays 50 bps + USD 1.00, and the
// most specific rule wins (USD stablecoins pay 10 bps).
func TestDefaultSchedule_R_QUOTE_01(t *testing.T) {
	if err := DefaultSchedule().Validate(); err != nil {
		t.Fatal(err)
	}
	e := sandboxEngine()
	for _, c := range []struct {
		src, dst, rail  string
		fees, cp, svcFx int64
		recv            int64
		outRail         string
	}{
		{"USD", "USD", RailInternal, 0, 0, 0, 10000, RailInternal},
		{"USD", "USD", RailACH, 25, 25, 0, 9975, RailACH},
		{"USD", "USD", "", 25, 25, 0, 9975, RailACH}, // default rail of USD
		{"USD", "USD", RailACHSameDay, 0, 0, 0, 10000, RailACHSameDay},
		{"USD", "USD", RailWire, 1500, 1500, 0, 8500, RailWire},
		{"USD", "USD", RailRTP, 50, 50, 0, 9950, RailRTP},
		{"USD", "USD", RailFedNow, 50, 50, 0, 9950, RailFedNow},
		{"USD", "EUR", "", 172, 20, 100, 9100, RailSEPAInstant},
		{"USD", "USDC", RailOnchain, 10, 0, 0, 99900000, RailOnchain},
		{"EUR", "EUR", RailSEPA, 20, 20, 0, 9980, RailSEPA},
	} {
		p := quote(t, e, Request{SourceCurrency: c.src, DestinationCurrency: c.dst, Rail: c.rail, Side: Sending, Amount: 10000})
		if p.FeesIncluded != c.fees || p.RateDetails.CounterpartyFixedFee != c.cp || p.RateDetails.ServiceApiFixedFee != c.svcFx ||
			p.TotalReceivingAmount != c.recv || p.Rail != c.outRail {
			t.Errorf("%s→%s %s: fees %d cp %d svcFixed %d recv %d rail %s; want %+v", c.src, c.dst, c.rail,
				p.FeesIncluded, p.RateDetails.CounterpartyFixedFee, p.RateDetails.ServiceApiFixedFee, p.TotalReceivingAmount, p.Rail, c)
		}
	}
	// A service fixed fee in USD is converted to the sending currency, rounded
	// up: USD 1.00 from EUR is ceil(100 × 0.925925925926) = 93 euro cents.
	p := quote(t, e, Request{SourceCurrency: "EUR", DestinationCurrency: "USD", Rail: RailInternal, Side: Sending, Amount: 10000})
	if p.RateDetails.ServiceApiFixedFee != 93 || p.RateDetails.ServiceApiVariableFeeAmount != 50 || p.FeesIncluded != 143 {
		t.Fatalf("EUR→USD fees: %+v", p.Result)
	}
}

// Platform fees (R-RATE-06, R-TXN-10): feeConfigs' CROSS_CURRENCY_TRANSACTION
// applies to USD sources across currencies only, inside the fees; an override
// replaces it (and applies within one currency too).
func TestPlatformFees_R_TXN_10_R_QUOTE_20(t *testing.T) {
	e := sandboxEngine()
	base := Request{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 10000}

	none := quote(t, e, base)
	if none.PlatformFeesIncluded != 0 {
		t.Fatalf("no config, platform fees %d", none.PlatformFeesIncluded)
	}
	withCfg := base
	withCfg.FeeConfigs = usdFee(30, 50)
	p := quote(t, e, withCfg)
	if p.PlatformFeesIncluded != 80 || p.FeesIncluded != 252 || p.TotalReceivingAmount != 9025 {
		t.Fatalf("feeConfigs: %+v", p.Result)
	}
	// Within one currency the cross-currency fee does not apply.
	same := withCfg
	same.DestinationCurrency, same.Rail = "USD", RailInternal
	if p := quote(t, e, same); p.PlatformFeesIncluded != 0 || p.FeesIncluded != 0 {
		t.Fatalf("same currency charged a cross-currency fee: %+v", p.Result)
	}
	// A fixed fee configured in another currency is converted, rounded up.
	eurFixed := base
	eurFixed.FeeConfigs = []platformconfig.FeeConfig{{FeeType: FeeTypeCrossCurrency, SourceCurrency: "USD",
		FixedFee: platformconfig.FixedFee{Amount: 50, Currency: "EUR"}}}
	if p := quote(t, e, eurFixed); p.PlatformFeesIncluded != 54 {
		t.Fatalf("EUR 0.50 in USD: %d, want 54", p.PlatformFeesIncluded)
	}

	// The override replaces the configuration.
	ov := withCfg
	ov.Override = &PlatformFeeOverride{PlatformVariableFeeBps: i64(10), PlatformFixedFee: &OverrideFixedFee{Amount: i64(5), Currency: str("USD")}}
	if p := quote(t, e, ov); p.PlatformFeesIncluded != 15 || p.FeesIncluded != 187 {
		t.Fatalf("override: %+v", p.Result)
	}
	ovSame := ov
	ovSame.DestinationCurrency, ovSame.Rail = "USD", RailInternal
	if p := quote(t, e, ovSame); p.PlatformFeesIncluded != 15 || p.FeesIncluded != 15 || p.TotalReceivingAmount != 9985 {
		t.Fatalf("override within USD: %+v", p.Result)
	}
	zero := base
	zero.FeeConfigs = usdFee(30, 50)
	zero.Override = &PlatformFeeOverride{PlatformVariableFeeBps: i64(0), PlatformFixedFee: &OverrideFixedFee{Amount: i64(0), Currency: str("USD")}}
	if p := quote(t, e, zero); p.PlatformFeesIncluded != 0 || p.FeesIncluded != 172 {
		t.Fatalf("zero override keeps the configured fee: %+v", p.Result)
	}
}

// R-QUOTE-20: platformFeeOverride needs a USD source; every other problem of
// the override is listed too.
func TestOverrideRefusedForNonUSD_R_QUOTE_20(t *testing.T) {
	e := sandboxEngine()
	ae := quoteErr(t, e, Request{SourceCurrency: "EUR", DestinationCurrency: "USD", Side: Sending, Amount: 10000,
		Override: &PlatformFeeOverride{PlatformVariableFeeBps: i64(10), PlatformFixedFee: &OverrideFixedFee{Amount: i64(5), Currency: str("EUR")}}})
	if ae.Status != 400 || ae.Code != "INVALID_INPUT" {
		t.Fatalf("%+v", ae)
	}
	fields := map[string]string{}
	for _, fe := range apierr.FieldList(ae) {
		fields[fe.Field] = fe.Constraint
	}
	if fields["platformFeeOverride"] != apierr.Enum || len(fields) != 1 {
		t.Fatalf("fields %v", fields)
	}

	if err := (&PlatformFeeOverride{PlatformVariableFeeBps: i64(1), PlatformFixedFee: &OverrideFixedFee{Amount: i64(1), Currency: str("EUR")}}).
		Validate("platformFeeOverride", "USD"); apierr.FieldList(err)[0].Field != "platformFeeOverride.platformFixedFee.currency" {
		t.Fatalf("a fixed fee in another currency than the source: %v", err)
	}
	bad := &PlatformFeeOverride{PlatformVariableFeeBps: i64(10001), PlatformFixedFee: &OverrideFixedFee{Amount: i64(-1)}}
	fields = map[string]string{}
	for _, fe := range apierr.FieldList(bad.Validate("platformFeeOverride", "USD")) {
		fields[fe.Field] = fe.Constraint
	}
	want := map[string]string{
		"platformFeeOverride.platformVariableFeeBps":    apierr.Maximum,
		"platformFeeOverride.platformFixedFee.amount":   apierr.Minimum,
		"platformFeeOverride.platformFixedFee.currency": apierr.Required,
	}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, fields[k], v, fields)
		}
	}
	if err := (&PlatformFeeOverride{}).Validate("platformFeeOverride", "USD"); len(apierr.FieldList(err)) != 2 {
		t.Fatalf("empty override: %v", err)
	}
	var nilOverride *PlatformFeeOverride
	if err := nilOverride.Validate("platformFeeOverride", "EUR"); err != nil {
		t.Fatalf("no override is fine for any source: %v", err)
	}
}

// R-QUOTE-38 and R-RATE-07: the pre-flight bounds refuse a sending amount
// outside them with AMOUNT_OUT_OF_RANGE; the platform's supportedCurrencies
// narrow them; the configured table changes them.
func TestBounds_R_QUOTE_38_R_RATE_07(t *testing.T) {
	e := sandboxEngine()
	est, err := e.Estimate(context.Background(), Request{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 10000})
	if err != nil || est.MinSendingAmount != 100 || est.MaxSendingAmount != 100_000_000 {
		t.Fatalf("USD→EUR bounds %d..%d (%v), want 100..100000000", est.MinSendingAmount, est.MaxSendingAmount, err)
	}
	// Priced off the cached rate for other sources: USD 1.00 in BTC rounds up.
	btc, _ := e.Estimate(context.Background(), Request{SourceCurrency: "BTC", DestinationCurrency: "EUR", Side: Sending, Amount: 100000})
	if btc.MinSendingAmount != 1539 || btc.MaxSendingAmount != 1538461538 {
		t.Fatalf("BTC bounds %d..%d", btc.MinSendingAmount, btc.MaxSendingAmount)
	}
	same, _ := e.Estimate(context.Background(), Request{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 10000})
	if same.MinSendingAmount != 1 || same.MaxSendingAmount != 100_000_000_00 {
		t.Fatalf("USD→USD bounds %d..%d", same.MinSendingAmount, same.MaxSendingAmount)
	}

	// Far below the minimum: refused (the fees alone are above it here).
	if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 5}); ae.Code != "AMOUNT_OUT_OF_RANGE" || ae.Status != 400 {
		t.Fatalf("%+v", ae)
	}
	e.Limits.Bounds = append(e.Limits.Bounds, Bound{Match: Match{SourceCurrency: "USD", DestinationCurrency: "MXN"}, Min: USD(1000), Max: USD(50000)})
	ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Sending, Amount: 999})
	if ae.Code != "AMOUNT_OUT_OF_RANGE" || ae.Details["minSendingAmount"] != int64(1000) || ae.Details["maxSendingAmount"] != int64(50000) {
		t.Fatalf("%+v", ae)
	}
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Sending, Amount: 1000})
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Sending, Amount: 50000})
	if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Sending, Amount: 50001}); ae.Code != "AMOUNT_OUT_OF_RANGE" {
		t.Fatalf("%+v", ae)
	}
	// A RECEIVING lock is bounded by what it sends.
	if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Receiving, Amount: 1_000_000}); ae.Code != "AMOUNT_OUT_OF_RANGE" {
		t.Fatalf("%+v", ae)
	}
	// The platform's own bounds for the source currency narrow the service's.
	cur := []platformconfig.CurrencyConfig{{CurrencyCode: "USD", MinAmount: 500, MaxAmount: 600}}
	if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailInternal, Side: Sending, Amount: 499, Currencies: cur}); ae.Code != "AMOUNT_OUT_OF_RANGE" {
		t.Fatalf("%+v", ae)
	}
	if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailInternal, Side: Sending, Amount: 601, Currencies: cur}); ae.Code != "AMOUNT_OUT_OF_RANGE" {
		t.Fatalf("%+v", ae)
	}
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailInternal, Side: Sending, Amount: 600, Currencies: cur})
}

// R-QUOTE-39: above the single-transaction maximum of the corridor (USD
// 1,000,000 across currencies, USD 100,000,000 within one by default) or of
// the withdrawal currency: 400 TRANSACTION_SIZE_LIMIT_EXCEEDED.
func TestSizeLimit_R_QUOTE_39(t *testing.T) {
	e := sandboxEngine()
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 100_000_000})
	ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 100_000_001})
	if ae.Code != "TRANSACTION_SIZE_LIMIT_EXCEEDED" || ae.Status != 400 || ae.Details["maxSendingAmount"] != int64(100_000_000) {
		t.Fatalf("%+v", ae)
	}
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailInternal, Side: Sending, Amount: 100_000_000_00})
	for _, amt := range []int64{100_000_000_01, 1e15, math.MaxInt64} {
		if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: amt}); ae.Code != "TRANSACTION_SIZE_LIMIT_EXCEEDED" {
			t.Fatalf("%d: %+v", amt, ae)
		}
	}
	// Huge RECEIVING amounts are the same error, never a wrapped int64.
	if ae := quoteErr(t, e, Request{SourceCurrency: "BTC", DestinationCurrency: "USD", Side: Receiving, Amount: math.MaxInt64}); ae.Code != "TRANSACTION_SIZE_LIMIT_EXCEEDED" {
		t.Fatalf("%+v", ae)
	}
	// A withdrawal-currency limit on the receiving amount (configurable).
	e.Limits.Size = append(e.Limits.Size, SizeLimit{Match: Match{DestinationCurrency: "MXN"}, MaxReceiving: Money{Amount: 1_000_000_00}})
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Receiving, Amount: 1_000_000_00})
	ae = quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Receiving, Amount: 1_000_000_01})
	if ae.Code != "TRANSACTION_SIZE_LIMIT_EXCEEDED" || ae.Details["maxReceivingAmount"] != int64(1_000_000_00) {
		t.Fatalf("%+v", ae)
	}
	est, _ := e.Estimate(context.Background(), Request{SourceCurrency: "USD", DestinationCurrency: "MXN", Side: Sending, Amount: 10000})
	if est.MaxSendingAmount != 5_800_000 { // MXN 1,000,000 at 0.058 USD
		t.Fatalf("max sending priced off the receiving limit: %d", est.MaxSendingAmount)
	}
}

// R-VER-05: ACH_SAME_DAY entries up to USD 1,000,000 (100,000,000 cents),
// and up to USD 10,000,000 from 2027-09-17 (New York), decided by the date.
func TestACHSameDay_R_VER_05(t *testing.T) {
	e := sandboxEngine()
	before := time.Date(2027, 9, 16, 23, 59, 59, 0, time.FixedZone("EDT", -4*3600))
	after := time.Date(2027, 9, 17, 0, 0, 0, 0, time.FixedZone("EDT", -4*3600))
	for _, c := range []struct {
		at     time.Time
		side   Side
		amount int64
		ok     bool
	}{
		{before, Sending, 100_000_000, true},
		{before, Sending, 100_000_001, false},
		{before, Receiving, 100_000_000, true},
		{before, Receiving, 100_000_001, false},
		{after, Sending, 100_000_001, true},
		{after, Sending, 1_000_000_000, true},
		{after, Receiving, 1_000_000_000, true},
		{after, Sending, 1_000_000_001, false},
		{after.Add(-time.Nanosecond), Sending, 100_000_001, false},
		{time.Date(2027, 9, 17, 3, 59, 0, 0, time.UTC), Sending, 100_000_001, false}, // still the 16th in New York
	} {
		_, err := e.Quote(context.Background(), Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailACHSameDay,
			Side: c.side, Amount: c.amount, At: c.at})
		if c.ok && err != nil || !c.ok && code(err) != "TRANSACTION_SIZE_LIMIT_EXCEEDED" {
			t.Errorf("%s %s %d: %v", c.at, c.side, c.amount, err)
		}
		if !c.ok {
			if ae, _ := apierr.From(err); ae.Details["alternativePaymentRail"] != RailACH {
				t.Errorf("details %v", ae.Details)
			}
		}
	}
	// Plain ACH has no such limit.
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailACH, Side: Sending, Amount: 1_000_000_001, At: before})
	// Without At the engine's clock decides.
	e.Now = func() time.Time { return after }
	quote(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Rail: RailACHSameDay, Side: Sending, Amount: 500_000_000})
	if l := DefaultLimits(); l.ACHSameDayMax(before) != 100_000_000 || l.ACHSameDayMax(after) != 1_000_000_000 {
		t.Fatal("ACHSameDayMax")
	}
}

// QUOTE_RATE_UNAVAILABLE reaches the caller unchanged, and a production
// environment without a rate source still prices same-currency transfers.
func TestRateUnavailable_QUOTE_RATE_UNAVAILABLE(t *testing.T) {
	now := func() time.Time { return t0 }
	e := NewEngine(rates.NewSandboxWith(map[string]string{"USD": "1", "EUR": "1.08"}, now), now)
	if ae := quoteErr(t, e, Request{SourceCurrency: "USD", DestinationCurrency: "NGN", Side: Sending, Amount: 10000}); ae.Code != "QUOTE_RATE_UNAVAILABLE" {
		t.Fatalf("%+v", ae)
	}
	prod := NewEngine(rates.Unconfigured{Now: now}, now)
	if ae := quoteErr(t, prod, Request{SourceCurrency: "USD", DestinationCurrency: "EUR", Side: Sending, Amount: 10000}); ae.Code != "QUOTE_RATE_UNAVAILABLE" {
		t.Fatalf("%+v", ae)
	}
	p := quote(t, prod, Request{SourceCurrency: "USD", DestinationCurrency: "USD", Side: Sending, Amount: 10000})
	if p.TotalReceivingAmount != 9975 || !p.ExchangeRate.Equal(one) {
		t.Fatalf("%+v", p.Result)
	}
	if ae := quoteErr(t, e, Request{SourceCurrency: "XYZ", DestinationCurrency: "USD", Side: Sending, Amount: 1}); ae.Code != "INVALID_INPUT" {
		t.Fatalf("%+v", ae)
	}
}

func TestScheduleValidate(t *testing.T) {
	for _, s := range []Schedule{
		{Service: []ServiceFee{{VariableBps: 10000}}},
		{Service: []ServiceFee{{Fixed: Money{Amount: 100}}}},
		{Payout: []PayoutFee{{Fixed: Money{Amount: 1, Currency: "XYZ"}}}},
		{Payout: []PayoutFee{{Fixed: USD(-1)}}},
	} {
		if s.Validate() == nil {
			t.Errorf("%+v should be refused", s)
		}
	}
	ok := Schedule{Service: []ServiceFee{{Match: Match{SourceCurrency: "EUR"}, Fixed: Money{Amount: 100}}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFormatMinor(t *testing.T) {
	for _, c := range []struct {
		amt  int64
		code string
		want string
	}{{100_000_000, "USD", "1000000.00 USD"}, {5, "BTC", "0.00000005 BTC"}, {150, "JPY", "150 JPY"}, {-7, "EUR", "-0.07 EUR"}} {
		if got := formatMinor(c.amt, c.code); got != c.want {
			t.Errorf("%d %s: %q", c.amt, c.code, got)
		}
	}
}

// An on-chain payout pays its chain's network fee (the sandbox fee model),
// in the receiving currency, inside the counterparty fee and feesIncluded;
// off chain, or with no network, there is none.
func TestNetworkFee(t *testing.T) {
	e := sandboxEngine()
	base := Request{SourceCurrency: "USDC", DestinationCurrency: "USDC", Rail: RailOnchain, Side: Sending, Amount: 10_000_000}
	none := quote(t, e, base)
	for network, fee := range map[string]int64{"SOLANA": 10_000, "ETHEREUM": 1_500_000, "BASE": 20_000, "TRON": 1_000_000, "SPARK": 0} {
		req := base
		req.Network = network
		p := quote(t, e, req)
		if p.NetworkFee != fee || p.FeesIncluded != none.FeesIncluded+fee || p.RateDetails.CounterpartyFixedFee != fee ||
			p.TotalReceivingAmount != none.TotalReceivingAmount-fee {
			t.Errorf("%s: network fee %d, fees %d, receiving %d", network, p.NetworkFee, p.FeesIncluded, p.TotalReceivingAmount)
		}
	}
	if PayoutNetwork("SOLANA_WALLET", RailOnchain) != "SOLANA" || PayoutNetwork("SOLANA_WALLET", RailLightning) != "" ||
		PayoutNetwork("USD_ACCOUNT", RailACH) != "" {
		t.Fatal("PayoutNetwork")
	}
	bad := DefaultSchedule()
	bad.Network = append(bad.Network, NetworkFee{Fixed: USD(1)})
	if bad.Validate() == nil {
		t.Fatal("a network fee without a network validated")
	}
	if err := DefaultSchedule().Validate(); err != nil {
		t.Fatal(err)
	}
}
