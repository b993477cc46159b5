package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/currency"
)

// rateEntries decodes GET /exchange-rates data with exact numbers.
func rateEntries(t *testing.T, r resp) []map[string]any {
	t.Helper()
	expect(t, r, http.StatusOK, "")
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := dec.Decode(&body); err != nil || body.Data == nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	return body.Data
}

func num(t *testing.T, m map[string]any, path ...string) string {
	t.Helper()
	var v any = m
	for _, k := range path {
		v = v.(map[string]any)[k]
	}
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v is %T (%v), want a JSON number", path, v, v)
	}
	return n.String()
}

func ratesClock(e *env) func(time.Duration) time.Time {
	e.driveByHand() // the clock moves under the test's hand alone
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	e.db.SetClock(func() time.Time { return now })
	return func(d time.Duration) time.Time {
		now = now.Add(d)
		e.db.SetClock(func() time.Time { return now })
		return now
	}
}

// R-RATE-01, R-RATE-04: USD to EUR with every entry field, priced exactly
// as docs/pricing.md works it out (rate 1.08; fees USD 1.00 + 50 bps + the
// EUR 0.20 SEPA Instant payout fee at 22 cents; 9828 cents buy 9100 euro
// cents).
func TestExchangeRates_Entry_R_RATE_01_R_RATE_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		advance := ratesClock(e)
		now := advance(0)
		data := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR", nil))
		if len(data) != 1 {
			t.Fatalf("%d entries", len(data))
		}
		x := data[0]
		got := map[string]string{
			"sendingAmount": num(t, x, "sendingAmount"), "minSendingAmount": num(t, x, "minSendingAmount"),
			"maxSendingAmount": num(t, x, "maxSendingAmount"), "receivingAmount": num(t, x, "receivingAmount"),
			"exchangeRate": num(t, x, "exchangeRate"), "fees.fixed": num(t, x, "fees", "fixed"), "fees.total": num(t, x, "fees", "total"),
		}
		want := map[string]string{"sendingAmount": "10000", "minSendingAmount": "100", "maxSendingAmount": "100000000",
			"receivingAmount": "9100", "exchangeRate": "1.08", "fees.fixed": "122", "fees.total": "172"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %s, want %s", k, got[k], v)
			}
		}
		src, dst := x["sourceCurrency"].(map[string]any), x["destinationCurrency"].(map[string]any)
		if src["code"] != "USD" || src["decimals"] != json.Number("2") || dst["code"] != "EUR" || dst["symbol"] != "€" {
			t.Errorf("currencies %v %v", src, dst)
		}
		if x["destinationPaymentRail"] != "SEPA_INSTANT" {
			t.Errorf("rail %v", x["destinationPaymentRail"])
		}
		if x["updatedAt"] != now.Format(time.RFC3339) {
			t.Errorf("updatedAt %v, want %s", x["updatedAt"], now.Format(time.RFC3339))
		}
	})
}

// R-RATE-02: sendingAmount defaults to 10000 and is echoed when given.
func TestExchangeRates_DefaultSendingAmount_R_RATE_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for _, x := range rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=GBP&destinationCurrency=USD&destinationCurrency=INR", nil)) {
			if num(t, x, "sendingAmount") != "10000" {
				t.Fatalf("default sendingAmount: %v", x)
			}
		}
		x := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=USD&sendingAmount=250000", nil))[0]
		if num(t, x, "sendingAmount") != "250000" || num(t, x, "receivingAmount") != "249975" || num(t, x, "exchangeRate") != "1" {
			t.Fatalf("USD→USD 250000: %v", x)
		}
	})
}

// R-RATE-03: destinationCurrency repeats; entries follow the request order,
// a repeated currency is answered once. Without it, every other currency.
func TestExchangeRates_RepeatableDestination_R_RATE_03(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		data := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=MXN&destinationCurrency=EUR&destinationCurrency=MXN", nil))
		if len(data) != 2 {
			t.Fatalf("%d entries", len(data))
		}
		mxn, eur := data[0], data[1]
		if mxn["destinationCurrency"].(map[string]any)["code"] != "MXN" || eur["destinationCurrency"].(map[string]any)["code"] != "EUR" {
			t.Fatalf("order: %v", data)
		}
		// 0.058 USD per peso; fees 100 + 50 + MXN 3.00 SPEI fee (18 cents).
		if num(t, mxn, "receivingAmount") != "169517" || num(t, mxn, "fees", "total") != "168" || mxn["destinationPaymentRail"] != "SPEI" {
			t.Fatalf("MXN entry %v", mxn)
		}

		all := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD", nil))
		var codes []string
		for _, x := range all {
			codes = append(codes, x["destinationCurrency"].(map[string]any)["code"].(string))
		}
		want := slices.DeleteFunc(currency.Codes(), func(c string) bool { return c == "USD" })
		if !slices.Equal(codes, want) {
			t.Fatalf("default destinations %v, want %v", codes, want)
		}
	})
}

// Bad queries list every invalid parameter (R-ERR-02 style field errors).
func TestExchangeRates_BadInput_R_RATE_01(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for _, c := range []struct {
			query string
			want  map[string]string
		}{
			{"", map[string]string{"sourceCurrency": "required"}},
			{"?sourceCurrency=", map[string]string{"sourceCurrency": "required"}},
			{"?sourceCurrency=XYZ", map[string]string{"sourceCurrency": "enum"}},
			{"?sourceCurrency=usd", map[string]string{"sourceCurrency": "enum"}},
			{"?sourceCurrency=USD&sourceCurrency=EUR", map[string]string{"sourceCurrency": "maxItems"}},
			{"?sourceCurrency=USD&destinationCurrency=EUR&destinationCurrency=ABC", map[string]string{"destinationCurrency[1]": "enum"}},
			{"?sourceCurrency=USD&sendingAmount=0", map[string]string{"sendingAmount": "minimum"}},
			{"?sourceCurrency=USD&sendingAmount=-5", map[string]string{"sendingAmount": "minimum"}},
			{"?sourceCurrency=USD&sendingAmount=1.5", map[string]string{"sendingAmount": "type"}},
			{"?sourceCurrency=USD&sendingAmount=abc", map[string]string{"sendingAmount": "type"}},
			{"?sourceCurrency=USD&sendingAmount=", map[string]string{"sendingAmount": "type"}},
			{"?sourceCurrency=USD&sendingAmount=99999999999999999999", map[string]string{"sendingAmount": "maximum"}},
			{"?destinationCurrency=ABC&sendingAmount=0", map[string]string{"sourceCurrency": "required", "destinationCurrency[0]": "enum", "sendingAmount": "minimum"}},
		} {
			r := e.do("GET", "/exchange-rates"+c.query, nil)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if got := fieldErrors(t, r); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s: fields %v, want %v", c.query, got, c.want)
			}
		}
		// An amount whose receiving side does not fit an int64.
		r := e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=NGN&sendingAmount=9223372036854775807", nil)
		expect(t, r, http.StatusBadRequest, "TRANSACTION_SIZE_LIMIT_EXCEEDED")
		expect(t, e.do("GET", "/exchange-rates?sourceCurrency=USD", nil, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}

// R-RATE-05: rates are cached about five minutes: calls within the window
// return the same rate and updatedAt; after it, a fresh observation.
func TestExchangeRates_Cache_R_RATE_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		advance := ratesClock(e)
		first := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=EUR&destinationCurrency=GBP", nil))[0]
		advance(4 * time.Minute)
		second := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=EUR&destinationCurrency=GBP", nil))[0]
		if first["updatedAt"] != second["updatedAt"] || num(t, first, "exchangeRate") != num(t, second, "exchangeRate") {
			t.Fatalf("within 5 minutes: %v vs %v", first["updatedAt"], second["updatedAt"])
		}
		now := advance(time.Minute + time.Second)
		third := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=EUR&destinationCurrency=GBP", nil))[0]
		if third["updatedAt"] != now.Format(time.RFC3339) {
			t.Fatalf("after 5 minutes: updatedAt %v, want %s", third["updatedAt"], now.Format(time.RFC3339))
		}
	})
}

// R-RATE-06: authenticated requests include the platform's fees: after PATCH
// /config feeConfigs (USD, 30 bps + USD 0.50) a USD→EUR entry carries 80
// cents more in fees and receives less; same-currency entries are untouched.
func TestExchangeRates_PlatformFees_R_RATE_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		q := "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&destinationCurrency=USD"
		before := rateEntries(t, e.do("GET", q, nil))
		expect(t, e.do("PATCH", "/config", `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":30,"fixedFee":{"amount":50,"currency":"USD"}}]}`), http.StatusOK, "")
		after := rateEntries(t, e.do("GET", q, nil))
		if num(t, before[0], "fees", "total") != "172" || num(t, after[0], "fees", "total") != "252" ||
			num(t, after[0], "fees", "fixed") != "172" || num(t, after[0], "receivingAmount") != "9025" {
			t.Fatalf("USD→EUR before %v after %v", before[0], after[0])
		}
		if num(t, after[1], "fees", "total") != "25" || num(t, after[1], "receivingAmount") != "9975" {
			t.Fatalf("USD→USD carries no cross-currency platform fee: %v", after[1])
		}
		// Other platforms' and environments' fees do not leak in: the
		// production configuration has none.
		prod := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=USD", nil, withCreds(e.production)))
		if num(t, prod[0], "fees", "total") != "25" {
			t.Fatalf("production %v", prod[0])
		}
	})
}

// R-RATE-07: the bounds are reported on every entry, min ≤ max, and an
// amount below the fees is priced at a receiving amount of 0 (the bounds
// are for quotes; GET /exchange-rates does not refuse on them).
func TestExchangeRates_Bounds_R_RATE_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for _, x := range rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=BTC", nil)) {
			var lo, hi int64
			fmt.Sscan(num(t, x, "minSendingAmount"), &lo)
			fmt.Sscan(num(t, x, "maxSendingAmount"), &hi)
			if lo < 1 || hi < lo {
				t.Fatalf("bounds %d..%d: %v", lo, hi, x)
			}
		}
		x := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&sendingAmount=50", nil))[0]
		if num(t, x, "receivingAmount") != "0" || num(t, x, "fees", "total") != "123" {
			t.Fatalf("small amount: %v", x)
		}
	})
}

// Production has no FX partner configured: it refuses every pair that needs a
// rate clearly (QUOTE_RATE_UNAVAILABLE), including EUR→EUR, whose limits are
// set in USD, lists no corridor by default, and prices USD→USD.
func TestExchangeRates_ProductionWithoutSource(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		prod := withCreds(e.production)
		expect(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR", nil, prod), http.StatusBadRequest, "QUOTE_RATE_UNAVAILABLE")
		if data := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD", nil, prod)); len(data) != 0 {
			t.Fatalf("production default list %v", data)
		}
		expect(t, e.do("GET", "/exchange-rates?sourceCurrency=EUR&destinationCurrency=EUR", nil, prod), http.StatusBadRequest, "QUOTE_RATE_UNAVAILABLE")
		x := rateEntries(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=USD", nil, prod))[0]
		if num(t, x, "exchangeRate") != "1" || num(t, x, "receivingAmount") != "9975" {
			t.Fatalf("production USD→USD %v", x)
		}
	})
}
