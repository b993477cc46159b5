package quotes

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// priced is what the service's own engine says about a transfer, with the
// tenant's configured fees.
func (f *fx) priced(src, dst, rail string, side pricing.Side, amount int64, override *pricing.PlatformFeeOverride) pricing.Priced {
	f.t.Helper()
	cfg, err := f.svc.Config(f.ctx, f.tn)
	if err != nil {
		f.t.Fatal(err)
	}
	p, err := f.svc.Pricing(f.tn.Env).Quote(f.ctx, pricing.Request{SourceCurrency: src, DestinationCurrency: dst, Rail: rail,
		Side: side, Amount: amount, FeeConfigs: cfg.FeeConfigs, Override: override, Currencies: cfg.SupportedCurrencies})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// Pricing: a quote carries exactly the engine's amounts, for both locked
// sides, same and cross currency, with configured fees and a per-quote
// platform fee override; the locked side is the fixed amount and the rest
// obeys sent = received × rate + fees within the documented rounding.
func TestCreate_PricesWithTheEngine(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		f.patchConfig(`{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":30,"fixedFee":{"amount":50,"currency":"USD"}}]}`)
		a, b := f.customer(true), f.customer(true)
		usd, dstUSD, dstEUR := f.account(a, "USD").ID, f.account(b, "USD").ID, f.account(b, "EUR").ID
		override := &pricing.PlatformFeeOverride{PlatformFixedFee: &pricing.OverrideFixedFee{Amount: ptr(int64(25)), Currency: ptr("USD")},
			PlatformVariableFeeBps: ptr(int64(10))}
		cases := []struct {
			name     string
			dst, cur string
			side     pricing.Side
			override *pricing.PlatformFeeOverride
		}{
			{"same currency, sending", dstUSD, "USD", pricing.Sending, nil},
			{"same currency, receiving, override", dstUSD, "USD", pricing.Receiving, override},
			{"cross currency, sending", dstEUR, "EUR", pricing.Sending, nil},
			{"cross currency, receiving, override", dstEUR, "EUR", pricing.Receiving, override},
		}
		for _, c := range cases {
			r := req(usd, c.dst, string(c.side), 123456)
			r.PlatformFeeOverride = c.override
			q, err := f.svc.Create(f.ctx, f.tn, r)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want := f.priced("USD", c.cur, pricing.RailInternal, c.side, 123456, c.override)
			if q.TotalSendingAmount != want.TotalSendingAmount || q.TotalReceivingAmount != want.TotalReceivingAmount ||
				q.FeesIncluded != want.FeesIncluded || q.PlatformFeesIncluded != want.PlatformFeesIncluded ||
				string(q.ExchangeRate) != string(pricing.Number(want.ExchangeRate)) {
				t.Fatalf("%s: quote %+v, engine %+v", c.name, q, want.Result)
			}
			locked := q.TotalSendingAmount
			if c.side == pricing.Receiving {
				locked = q.TotalReceivingAmount
			}
			if locked != 123456 || q.LockedCurrencyAmount != 123456 || q.LockedCurrencySide != string(c.side) {
				t.Fatalf("%s: the locked side is not fixed: %+v", c.name, q)
			}
			if c.cur == "USD" && (string(q.ExchangeRate) != "1" || q.TotalSendingAmount-q.FeesIncluded != q.TotalReceivingAmount) {
				t.Fatalf("%s: same currency: rate %s, S-F %d, R %d", c.name, q.ExchangeRate, q.TotalSendingAmount-q.FeesIncluded, q.TotalReceivingAmount)
			}
			if c.override != nil && q.PlatformFeesIncluded == 0 {
				t.Fatalf("%s: the override charged nothing", c.name)
			}
			if c.cur == "EUR" && q.FeesIncluded <= q.PlatformFeesIncluded {
				t.Fatalf("%s: configured cross-currency fees missing: %d / %d", c.name, q.FeesIncluded, q.PlatformFeesIncluded)
			}
			rate, _ := decimal.NewFromString(string(q.ExchangeRate))
			residual := decimal.NewFromInt(q.TotalSendingAmount - q.FeesIncluded).Sub(decimal.NewFromInt(q.TotalReceivingAmount).Mul(rate))
			if residual.IsNegative() || !residual.LessThan(decimal.Max(decimal.NewFromInt(1), rate)) {
				t.Fatalf("%s: residual %s", c.name, residual)
			}
		}
	})
}

// Locking and creation: a quote is PENDING with its transaction (PENDING,
// OUTGOING, the quote's amounts) and moves no money; its amounts do not
// change when the market moves before execution, and execution moves
// exactly the quoted amounts.
func TestCreate_LocksAmountsUntilExecution(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a, b := f.customer(true), f.customer(true)
		src, dst := f.account(a, "USD"), f.account(b, "EUR")
		f.fund(src, 1_000_000)
		q, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 500_000))
		if err != nil {
			t.Fatal(err)
		}
		if q.Status != StatusPending || !q.ExpiresAt.After(q.CreatedAt) {
			t.Fatalf("%+v", q)
		}
		row, err := f.db.Read().GetTransaction(f.ctx, f.tn, q.TransactionID)
		if err != nil {
			t.Fatal(err)
		}
		x, err := transactions.Render(row)
		if err != nil {
			t.Fatal(err)
		}
		if x.Status != transactions.StatusPending || x.Type != transactions.TypeOutgoing || x.QuoteID != q.ID {
			t.Fatalf("transaction %+v", x)
		}
		if f.balance(src).Available != 1_000_000 || f.balance(dst).Posted != 0 {
			t.Fatal("a PENDING quote moved money")
		}
		// The sandbox rates move with time; the quote does not.
		f.advance(4 * time.Minute)
		later := f.priced("USD", "EUR", pricing.RailInternal, pricing.Sending, 500_000, nil)
		got, err := f.svc.Get(f.ctx, f.tn, q.ID)
		if err != nil || got.TotalReceivingAmount != q.TotalReceivingAmount || got.ExchangeRate != q.ExchangeRate {
			t.Fatalf("GET changed the quote: %+v %v", got, err)
		}
		x2, err := f.svc.Execute(f.ctx, f.tn, q.ID)
		if err != nil {
			t.Fatal(err)
		}
		if x2.Status != StatusProcessing || x2.TransactionID != q.TransactionID {
			t.Fatalf("execute: %+v", x2)
		}
		if f.balance(src).Posted != 1_000_000-q.TotalSendingAmount || f.balance(dst).Posted != q.TotalReceivingAmount {
			t.Fatalf("moved %d / %d, quoted %d / %d (a fresh price would receive %d)", 1_000_000-f.balance(src).Posted,
				f.balance(dst).Posted, q.TotalSendingAmount, q.TotalReceivingAmount, later.TotalReceivingAmount)
		}
		f.audit()
	})
}

// Execution and fees: an internal transfer posts one balanced transfer:
// source −S, service fees +(F−P), platform fees +P, and (cross currency)
// FX +(S−F) in the sending currency and −R in the receiving one, the
// destination +R. The quote reads COMPLETED, the outgoing transaction is
// COMPLETED with settledAt, and the receiver gets a COMPLETED INCOMING
// transaction. A second execute is 409 and moves nothing.
func TestExecute_InternalLegsAndFees(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		f.patchConfig(`{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":30,"fixedFee":{"amount":50,"currency":"USD"}}]}`)
		a, b := f.customer(true), f.customer(true)
		src, eur := f.account(a, "USD"), f.account(b, "EUR")
		f.fund(src, 1_000_000)
		r := req(src.ID, eur.ID, "SENDING", 100_000)
		r.PlatformFeeOverride = &pricing.PlatformFeeOverride{PlatformFixedFee: &pricing.OverrideFixedFee{Amount: ptr(int64(40)), Currency: ptr("USD")},
			PlatformVariableFeeBps: ptr(int64(0))}
		q, err := f.svc.Create(f.ctx, f.tn, r)
		if err != nil {
			t.Fatal(err)
		}
		S, F, P, R := q.TotalSendingAmount, q.FeesIncluded, q.PlatformFeesIncluded, q.TotalReceivingAmount
		if P != 40 || F <= P {
			t.Fatalf("fees F=%d P=%d", F, P)
		}
		fxUSD, fxEUR := f.system(ledger.CodeFX, "USD"), f.system(ledger.CodeFX, "EUR")
		if _, err := f.svc.Execute(f.ctx, f.tn, q.ID); err != nil {
			t.Fatal(err)
		}
		checks := []struct {
			what      string
			got, want int64
		}{
			{"source", f.balance(src).Posted, 1_000_000 - S},
			{"destination", f.balance(eur).Posted, R},
			{"service fees", f.system(ledger.CodeServiceFees, "USD"), F - P},
			{"platform fees", f.system(ledger.CodePlatformFees, "USD"), P},
			{"FX USD", f.system(ledger.CodeFX, "USD") - fxUSD, S - F},
			{"FX EUR", f.system(ledger.CodeFX, "EUR") - fxEUR, -R},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
			}
		}
		got, err := f.svc.Get(f.ctx, f.tn, q.ID)
		if err != nil || got.Status != StatusCompleted {
			t.Fatalf("quote after execute: %v %v", got.Status, err)
		}
		out, _ := f.db.Read().GetTransaction(f.ctx, f.tn, q.TransactionID)
		ox, _ := transactions.Render(out)
		if ox.Status != transactions.StatusCompleted || ox.SettledAt == nil {
			t.Fatalf("outgoing %+v", ox)
		}
		in, _, err := f.db.Read().ListTransactions(f.ctx, f.tn, store.TransactionFilter{Type: transactions.TypeIncoming}, "", 10)
		if err != nil || len(in) != 1 || in[0].Status != transactions.StatusCompleted || in[0].AccountID != eur.ID {
			t.Fatalf("incoming %+v %v", in, err)
		}
		before := f.state()
		_, err = f.svc.Execute(f.ctx, f.tn, q.ID)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
			t.Fatalf("second execute: %v", err)
		}
		if f.state() != before || f.balance(src).Posted != 1_000_000-S {
			t.Fatal("a second execute moved money")
		}
		f.audit()
	})
}

// Execution to an external account: a ledger HOLD (source −S pending,
// clearing +R pending) and one rails hand-off with the quote's amounts,
// rail, remittance and descriptor; the transaction is PROCESSING. When the
// rails refuse the hand-off, the whole execution rolls back.
func TestExecute_ExternalHoldsAndSubmits(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a, b := f.customer(true), f.customer(true)
		src := f.account(a, "USD")
		ext := f.external(b, "1234561234")
		f.fund(src, 1_000_000)
		r := req(src.ID, ext, "SENDING", 10_000)
		r.RemittanceInformation, r.StatementDescriptor = ptr("Invoice 42"), ptr("RENT")
		q, err := f.svc.Create(f.ctx, f.tn, r)
		if err != nil {
			t.Fatal(err)
		}
		if q.Destination.PaymentRail != pricing.RailACH {
			t.Fatalf("default rail %q", q.Destination.PaymentRail)
		}
		f.submitErr = errors.New("rail down")
		before := f.state()
		if _, err := f.svc.Execute(f.ctx, f.tn, q.ID); err == nil || !errors.Is(err, f.submitErr) {
			t.Fatalf("execute with the rails down: %v", err)
		}
		if f.state() != before || f.balance(src).Available != 1_000_000 {
			t.Fatal("a failed hand-off left money held")
		}
		if got, _ := f.svc.Get(f.ctx, f.tn, q.ID); got.Status != StatusPending {
			t.Fatalf("quote after a failed hand-off: %s", got.Status)
		}
		f.submitErr = nil
		if _, err := f.svc.Execute(f.ctx, f.tn, q.ID); err != nil {
			t.Fatal(err)
		}
		bal := f.balance(src)
		if bal.Posted != 1_000_000 || bal.Available != 1_000_000-q.TotalSendingAmount {
			t.Fatalf("held: %+v", bal)
		}
		if len(f.payouts) != 1 {
			t.Fatalf("%d hand-offs", len(f.payouts))
		}
		p := f.payouts[0]
		if p.QuoteID != q.ID || p.TransactionID != q.TransactionID || p.Rail != pricing.RailACH || p.HoldID == "" ||
			p.ExternalAccountID != ext || p.SendingAmount != q.TotalSendingAmount || p.ReceivingAmount != q.TotalReceivingAmount ||
			p.RemittanceInformation != "Invoice 42" || p.StatementDescriptor != "RENT" {
			t.Fatalf("payout %+v", p)
		}
		row, _ := f.db.Read().GetTransaction(f.ctx, f.tn, q.TransactionID)
		if row.Status != transactions.StatusProcessing {
			t.Fatalf("transaction %s", row.Status)
		}
		f.audit()
	})
}

// immediatelyExecute creates and executes in one call: PROCESSING, money
// moved, one quote and one transaction stored (as execution left them).
func TestCreate_ImmediatelyExecute(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a, b := f.customer(true), f.customer(true)
		src, dst := f.account(a, "USD"), f.account(b, "USD")
		f.fund(src, 10_000)
		r := req(src.ID, dst.ID, "SENDING", 4_000)
		r.ImmediatelyExecute = ptr(true)
		q, err := f.svc.Create(f.ctx, f.tn, r)
		if err != nil {
			t.Fatal(err)
		}
		if q.Status != StatusProcessing || f.balance(src).Posted != 6_000 || f.balance(dst).Posted != q.TotalReceivingAmount {
			t.Fatalf("%+v", q)
		}
		if n, _ := f.db.Read().CountQuotes(f.ctx, f.tn); n != 1 {
			t.Fatalf("%d quotes", n)
		}
		if got, err := f.svc.Get(f.ctx, f.tn, q.ID); err != nil || got.Status != StatusCompleted {
			t.Fatalf("%v %v", got.Status, err)
		}
		f.audit()
	})
}

// Expiry: with a one-minute expiry a quote is executable until just
// before expiresAt; then reading it expires it (quote and transaction
// EXPIRED), executing is 400 QUOTE_EXPIRED and moves nothing, ExpireDue
// sweeps the unread ones, and EXPIRED is terminal.
func TestExpiry(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		f.svc.Expiry = time.Minute
		a, b := f.customer(true), f.customer(true)
		src, dst := f.account(a, "USD"), f.account(b, "USD")
		f.fund(src, 10_000)
		q1, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 1_000))
		if err != nil {
			t.Fatal(err)
		}
		q2, _ := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 1_000))
		q3, _ := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 1_000))
		if q1.ExpiresAt.Sub(q1.CreatedAt) != time.Minute {
			t.Fatalf("expiry %s", q1.ExpiresAt.Sub(q1.CreatedAt))
		}
		f.advance(time.Minute - time.Second)
		if _, err := f.svc.Execute(f.ctx, f.tn, q3.ID); err != nil {
			t.Fatalf("execute just before expiry: %v", err)
		}
		f.advance(time.Second) // now == expiresAt: expired
		before := f.state()
		if _, err := f.svc.Execute(f.ctx, f.tn, q1.ID); code(err) != "QUOTE_EXPIRED" {
			t.Fatalf("execute at expiresAt: %v", err)
		}
		if f.balance(src).Posted != 9_000 || f.state() != before {
			t.Fatal("an expired quote moved money")
		}
		got, err := f.svc.Get(f.ctx, f.tn, q1.ID)
		if err != nil || got.Status != StatusExpired {
			t.Fatalf("%v %v", got.Status, err)
		}
		if row, _ := f.db.Read().GetTransaction(f.ctx, f.tn, q1.TransactionID); row.Status != transactions.StatusExpired {
			t.Fatalf("transaction %s", row.Status)
		}
		n, err := f.svc.ExpireDue(f.ctx, 10)
		if err != nil || n != 1 {
			t.Fatalf("ExpireDue %d %v", n, err)
		}
		if got, _ := f.svc.Get(f.ctx, f.tn, q2.ID); got.Status != StatusExpired {
			t.Fatalf("swept quote %s", got.Status)
		}
		f.advance(time.Hour)
		if n, _ := f.svc.ExpireDue(f.ctx, 10); n != 0 {
			t.Fatalf("ExpireDue again: %d", n)
		}
		for _, q := range []Quote{q1, q2} {
			if got, _ := f.svc.Get(f.ctx, f.tn, q.ID); got.Status != StatusExpired {
				t.Fatalf("terminal: %s", got.Status)
			}
			if _, err := f.svc.Execute(f.ctx, f.tn, q.ID); code(err) != "QUOTE_EXPIRED" {
				t.Fatalf("execute later: %v", err)
			}
		}
		if got, _ := f.svc.Get(f.ctx, f.tn, q3.ID); got.Status != StatusCompleted {
			t.Fatalf("an executed quote does not expire: %s", got.Status)
		}
		f.audit()
	})
}

// Limits: the daily volume (per tenant, US cents of executed sending
// amounts per UTC day) refuses a quote that could not execute and an
// execution that would pass it; unexecuted quotes use none of it; a new
// UTC day starts afresh; the default is USD 1,000,000,000.
func TestDailyVolumeLimit(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		limit := func(tn store.Tenant) int64 {
			t.Helper()
			v, err := f.svc.VolumeLimit(f.ctx, f.db.Read(), tn)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if limit(f.tn) != DefaultDailyVolumeLimit || DefaultDailyVolumeLimit != 100_000_000_000 {
			t.Fatal("default limit")
		}
		if err := f.svc.SetDailyVolumeLimit(f.ctx, f.tn, 10_000); err != nil {
			t.Fatal(err)
		}
		other := store.Tenant{PlatformID: f.tn.PlatformID, Env: store.EnvProduction}
		if limit(other) != DefaultDailyVolumeLimit {
			t.Fatal("the limit leaked to another tenant")
		}
		a, b := f.customer(true), f.customer(true)
		src, dst := f.account(a, "USD"), f.account(b, "USD")
		f.fund(src, 100_000)
		if _, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 10_001)); code(err) != "DAILY_VOLUME_LIMIT_EXCEEDED" {
			t.Fatalf("over the limit: %v", err)
		}
		q1, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 6_000))
		if err != nil {
			t.Fatal(err)
		}
		q2, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 6_000))
		if err != nil {
			t.Fatal("unexecuted quotes use no volume:", err)
		}
		if _, err := f.svc.Execute(f.ctx, f.tn, q1.ID); err != nil {
			t.Fatal(err)
		}
		before := f.state()
		var ae *apierr.Error
		if _, err := f.svc.Execute(f.ctx, f.tn, q2.ID); !errors.As(err, &ae) || ae.Code != "DAILY_VOLUME_LIMIT_EXCEEDED" || ae.Status != http.StatusTooManyRequests {
			t.Fatalf("execute over the limit: %v", err)
		}
		if f.state() != before || f.balance(src).Posted != 94_000 {
			t.Fatal("a refused execution moved money")
		}
		// The next UTC day.
		f.mu.Lock()
		f.now = time.Date(f.now.Year(), f.now.Month(), f.now.Day()+1, 0, 0, 1, 0, time.UTC)
		f.mu.Unlock()
		q3, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 10_000))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Execute(f.ctx, f.tn, q3.ID); err != nil {
			t.Fatalf("a new day: %v", err)
		}
		f.audit()
	})
}

// Concurrency: many executions race for one account's balance and the
// day's volume; the ledger never overdraws and the volume never passes the
// limit; each quote executes at most once even when executed twice at once.
func TestExecute_Concurrent(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		if err := f.svc.SetDailyVolumeLimit(f.ctx, f.tn, 7_000); err != nil {
			t.Fatal(err)
		}
		a, b := f.customer(true), f.customer(true)
		src, dst := f.account(a, "USD"), f.account(b, "USD")
		f.fund(src, 5_000)
		var qs []Quote
		for range 8 {
			q, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 1_000))
			if err != nil {
				t.Fatal(err)
			}
			qs = append(qs, q, q) // each quote twice
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		done := map[string]int{}
		codes := map[string]int{}
		for _, q := range qs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.svc.Execute(context.Background(), f.tn, q.ID)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					done[q.ID]++
				case code(err) != "":
					codes[code(err)]++
				default:
					t.Errorf("execute: %v", err)
				}
			}()
		}
		wg.Wait()
		total := 0
		for id, n := range done {
			if n != 1 {
				t.Fatalf("quote %s executed %d times", id, n)
			}
			total++
		}
		if total != 5 || f.balance(src).Posted != 0 || f.balance(dst).Posted != 5_000 {
			t.Fatalf("%d executed (codes %v); source %d", total, codes, f.balance(src).Posted)
		}
		f.audit()
	})
}

// Error paths: each refusal has its code and changes nothing.
func TestCreate_Refusals(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a, b, noTerms := f.customer(true), f.customer(true), f.customer(false)
		src, dst, inr := f.account(a, "USD"), f.account(b, "USD"), f.account(b, "INR")
		f.fund(src, 5_000)
		nt := f.account(noTerms, "USD")
		f.fund(nt, 5_000)
		immediate := func(r Request) Request { r.ImmediatelyExecute = ptr(true); return r }
		wire := req(src.ID, f.external(b, "1234561234"), "SENDING", 1_000)
		wire.Destination.PaymentRail, wire.StatementDescriptor = ptr(pricing.RailWire), ptr("RENT")
		cases := []struct {
			name   string
			r      Request
			status int
			code   string
		}{
			{"empty", Request{}, 400, "INVALID_INPUT"},
			{"unknown source", req("InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", dst.ID, "SENDING", 1_000), 404, "ACCOUNT_NOT_FOUND"},
			{"unknown destination", req(src.ID, "ExternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", "SENDING", 1_000), 404, "ACCOUNT_NOT_FOUND"},
			{"self", req(src.ID, src.ID, "SENDING", 1_000), 400, "SELF_PAYMENT"},
			{"terms", req(nt.ID, dst.ID, "SENDING", 1_000), 400, "END_USER_TERMS_NOT_ACCEPTED"},
			{"insufficient", immediate(req(src.ID, dst.ID, "SENDING", 5_001)), 400, "INSUFFICIENT_FUNDS"},
			{"INR without purpose", req(src.ID, inr.ID, "SENDING", 10_000), 400, "INVALID_INPUT"},
			{"descriptor on WIRE", wire, 400, "INVALID_INPUT"},
			{"UMA without lookup", Request{Source: &SourceIn{SourceType: ptr(SourceAccount), AccountID: ptr(src.ID)},
				Destination:        &DestinationIn{DestinationType: ptr(DestUMAAddress), UmaAddress: ptr("$bob@example.com"), Currency: ptr("USD")},
				LockedCurrencySide: ptr("SENDING"), LockedCurrencyAmount: ptr(int64(1_000)), LookupID: ptr("Lookup:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b")},
				404, "LOOKUP_REQUEST_NOT_FOUND"},
			{"instructions executed at once", immediate(Request{Source: &SourceIn{SourceType: ptr(SourceRealtimeFunding), CustomerID: ptr(a), Currency: ptr("USD")},
				Destination:        &DestinationIn{DestinationType: ptr(DestAccount), AccountID: ptr(dst.ID)},
				LockedCurrencySide: ptr("SENDING"), LockedCurrencyAmount: ptr(int64(1_000))}), 400, "INVALID_INPUT"},
		}
		for _, c := range cases {
			before := f.state()
			_, err := f.svc.Create(f.ctx, f.tn, c.r)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != c.status || ae.Code != c.code {
				t.Fatalf("%s: %v, want %d %s", c.name, err, c.status, c.code)
			}
			if f.state() != before || f.balance(src).Posted != 5_000 {
				t.Fatalf("%s changed something", c.name)
			}
		}
		// The insufficient-funds error names the account.
		_, err := f.svc.Create(f.ctx, f.tn, immediate(req(src.ID, dst.ID, "SENDING", 5_001)))
		var ae *apierr.Error
		if errors.As(err, &ae); ae.Details["accountId"] != src.LedgerAccountID {
			t.Fatalf("details %v", ae.Details)
		}
		// No webhook endpoint: nothing can be sent.
		f.patchConfig(`{"webhookEndpoint":null}`)
		if _, err := f.svc.Create(f.ctx, f.tn, req(dst.ID, src.ID, "SENDING", 1)); code(err) != "WEBHOOK_ENDPOINT_NOT_SET" {
			t.Fatalf("no webhook: %v", err)
		}
		if _, err := f.svc.Get(f.ctx, f.tn, "Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"); code(err) != "QUOTE_NOT_FOUND" {
			t.Fatalf("unknown quote: %v", err)
		}
		if _, err := f.svc.Execute(f.ctx, f.tn, "Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"); code(err) != "QUOTE_NOT_FOUND" {
			t.Fatalf("unknown quote: %v", err)
		}
		f.audit()
	})
}

// Tenancy: a quote of one environment is not found from the other.
func TestQuotes_TenantScoped(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a, b := f.customer(true), f.customer(true)
		src, dst := f.account(a, "USD"), f.account(b, "USD")
		f.fund(src, 5_000)
		q, err := f.svc.Create(f.ctx, f.tn, req(src.ID, dst.ID, "SENDING", 1_000))
		if err != nil {
			t.Fatal(err)
		}
		prod := store.Tenant{PlatformID: f.tn.PlatformID, Env: store.EnvProduction}
		if _, err := f.svc.Get(f.ctx, prod, q.ID); code(err) != "QUOTE_NOT_FOUND" {
			t.Fatalf("GET from production: %v", err)
		}
		if _, err := f.svc.Execute(f.ctx, prod, q.ID); code(err) != "QUOTE_NOT_FOUND" {
			t.Fatalf("execute from production: %v", err)
		}
		if _, err := f.svc.Create(f.ctx, prod, req(src.ID, dst.ID, "SENDING", 1_000)); code(err) == "" {
			t.Fatal("production used a sandbox account")
		}
		if f.balance(src).Posted != 5_000 {
			t.Fatal("money moved across tenants")
		}
	})
}
