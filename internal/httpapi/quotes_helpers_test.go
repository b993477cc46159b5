package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/pricing"
)

// qtWebhook sets the sandbox webhook endpoint (quotes need one).
func (e *env) qtWebhook(t *testing.T) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", cobj{"webhookEndpoint": "https://hooks.example.com/paymentsd"}), http.StatusOK, "")
}

// qtCustomer creates a customer who accepted the end-user terms.
func (e *env) qtCustomer(t *testing.T) string {
	t.Helper()
	typ, version := e.custTerms(t)
	c := e.custCreate(t, cwith(custIndividual("Jane Doe"), "agreementConsents", []any{custConsent(typ, version)}))
	return c["id"].(string)
}

// qtSetup supports currencies, sets the webhook and makes two customers
// with terms; it returns their ids.
func (e *env) qtSetup(t *testing.T, currencies ...string) (string, string) {
	t.Helper()
	if len(currencies) == 0 {
		currencies = []string{"USD"}
	}
	e.acSupport(t, currencies...)
	e.qtWebhook(t)
	return e.qtCustomer(t), e.qtCustomer(t)
}

func (e *env) qtAccountID(t *testing.T, customerID, cur string) string {
	t.Helper()
	return e.acAccount(t, customerID, cur)["id"].(string)
}

func (e *env) qtBalance(t *testing.T, customerID, cur string) int64 {
	t.Helper()
	return qtAmount(t, e.acAccount(t, customerID, cur), "balance")
}

// qtAmount reads a CurrencyAmount field.
func qtAmount(t *testing.T, m map[string]any, field string) int64 {
	t.Helper()
	ca, ok := m[field].(map[string]any)
	if !ok {
		t.Fatalf("%s is not a CurrencyAmount: %v", field, m[field])
	}
	return int64(ca["amount"].(float64))
}

// qtBody is a POST /quotes body between two accounts.
func qtBody(src, dst, side string, amount int64, kv ...any) cobj {
	return cwith(cobj{
		"source":             cobj{"sourceType": "ACCOUNT", "accountId": src},
		"destination":        cobj{"destinationType": "ACCOUNT", "accountId": dst},
		"lockedCurrencySide": side, "lockedCurrencyAmount": amount,
	}, kv...)
}

// qtQuote posts a quote and expects 200.
func (e *env) qtQuote(t *testing.T, body any, opts ...reqOpt) map[string]any {
	t.Helper()
	r := e.do("POST", "/quotes", body, opts...)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// qtCounts is acCounts plus the number of quotes.
func (e *env) qtCounts(t *testing.T) string {
	t.Helper()
	n, err := e.db.Read().CountQuotes(context.Background(), e.acTenant())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s quotes %d", e.acCounts(t), n)
}

func qnum(t *testing.T, m map[string]any, k string) int64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Fatalf("%s is not a number: %v", k, m[k])
	}
	return int64(v)
}

// qtPriced prices the same transfer with the server's engine, for exact
// expectations.
func (e *env) qtPriced(t *testing.T, src, dst, rail string, side pricing.Side, amount int64) pricing.Priced {
	t.Helper()
	p, err := e.srv.pricingEngine("sandbox").Quote(context.Background(), pricing.Request{
		SourceCurrency: src, DestinationCurrency: dst, Rail: rail, Side: side, Amount: amount})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// qtIdentity checks sent = received × rate + fees within the documented
// rounding (docs/pricing.md): 0 ≤ residual < max(1, U).
func qtIdentity(t *testing.T, q map[string]any) {
	t.Helper()
	S, F, R := qnum(t, q, "totalSendingAmount"), qnum(t, q, "feesIncluded"), qnum(t, q, "totalReceivingAmount")
	rate, err := decimal.NewFromString(string(mustJSONNumber(t, q["exchangeRate"])))
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := currency.Lookup(q["sendingCurrency"].(map[string]any)["code"].(string))
	rc, _ := currency.Lookup(q["receivingCurrency"].(map[string]any)["code"].(string))
	u := rate.Shift(int32(sc.Decimals - rc.Decimals))
	residual := decimal.NewFromInt(S - F).Sub(decimal.NewFromInt(R).Mul(u))
	bound := decimal.Max(decimal.NewFromInt(1), u)
	if residual.IsNegative() || !residual.LessThan(bound) {
		t.Fatalf("identity: S=%d F=%d R=%d U=%s residual %s not in [0, %s)", S, F, R, u, residual, bound)
	}
}

func mustJSONNumber(t *testing.T, v any) string {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("not a number: %v", v)
	}
	return decimal.NewFromFloat(f).String()
}
