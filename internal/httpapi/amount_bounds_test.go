package httpapi

import (
	"context"
	"math"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
)

// Every amount that can reach the ledger is bounded by ledger.MaxAmount:
// above it is 400 INVALID_INPUT naming the field, with no effect. A sandbox
// deposit of MaxInt64 followed by one of 5 used to break WORLD's balance
// and the audit (integer overflow, bigint out of range); now the first is
// refused, and the ledger stays readable and clean.
func TestAmounts_BoundedAtEveryEntryPoint(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		ext := e.eaCreate(t, "/customers/external-accounts", eaUSD(a, "123456789"))["id"].(string)
		for _, amount := range []int64{math.MaxInt64, ledger.MaxAmount + 1} {
			for _, c := range []struct {
				path, field string
				body        cobj
			}{
				{"/sandbox/incoming-payments", "amount", cobj{"accountId": src, "amount": amount}},
				{"/sandbox/internal-accounts/" + src + "/fund", "amount", cobj{"amount": amount}},
				{"/quotes", "lockedCurrencyAmount", qtBody(src, ext, "SENDING", amount, "immediatelyExecute", true)},
				{"/transfer-out", "amount", cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": ext}, "amount": amount}},
				{"/transfer-in", "amount", cobj{"source": cobj{"accountId": ext}, "destination": cobj{"accountId": src}, "amount": amount}},
				{"/sandbox/send", "currencyAmount", cobj{"quoteId": "Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", "currencyCode": "USD", "currencyAmount": amount}},
			} {
				before := e.snapshot()
				r := e.do("POST", c.path, c.body)
				expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
				if got := fieldErrors(t, r)[c.field]; got != "maximum" {
					t.Fatalf("%s %d: %s constraint %q: %s", c.path, amount, c.field, got, r.Body)
				}
				if e.snapshot() != before {
					t.Fatalf("%s %d: a refused amount changed data", c.path, amount)
				}
			}
		}
		// The largest amount is taken, as many times as asked, and the
		// ledger's sums stay readable.
		expect(t, e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": ledger.MaxAmount}), http.StatusOK, "")
		expect(t, e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": 5}), http.StatusOK, "")
		l := ledger.New(e.db)
		world, err := l.SystemAccount(context.Background(), e.acTenant(), ledger.CodeWorld, "USD")
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Balance(context.Background(), e.acTenant(), world.ID)
		if err != nil || b.Posted != -(ledger.MaxAmount+5) {
			t.Fatalf("WORLD balance %+v (%v); want posted %d", b, err, -(ledger.MaxAmount + 5))
		}
		e.acAudit(t)
	})
}
