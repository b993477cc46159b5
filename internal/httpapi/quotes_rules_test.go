package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// qtRefusal posts a quote that must be refused with status and code (and a
// details.errors[] entry on each field, with its constraint when one is
// given as "field=constraint"), and proves it changed nothing: ledger,
// accounts, transactions, quotes, and the sender's balance.
func (e *env) qtRefusal(t *testing.T, sender string, body any, status int, code string, fields ...string) resp {
	t.Helper()
	before, bal := e.qtCounts(t), e.qtBalance(t, sender, "USD")
	r := e.qdo("POST", "/quotes", body)
	if r.Status != status || r.Code(t) != code {
		t.Fatalf("%d %s, want %d %s: %s", r.Status, r.Code(t), status, code, r.Body)
	}
	fe := fieldErrors(t, r)
	for _, f := range fields {
		name, constraint, _ := strings.Cut(f, "=")
		got, ok := fe[name]
		if !ok || (constraint != "" && got != constraint) {
			t.Fatalf("no %q error on %s: %s", constraint, name, r.Body)
		}
	}
	if e.qtCounts(t) != before || e.qtBalance(t, sender, "USD") != bal {
		t.Fatal("a refused quote changed something")
	}
	return r
}

// Each refusal of POST /quotes and execute with its documented input, one
// rule per subtest; none changes anything. Where a rule also states what is
// accepted, the subtest checks that too.
func TestQuotes_Refusals_ChangeNothing(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the daily-volume subtest counts the day's executions
		e.acSupport(t, "USD", "EUR", "INR")
		a, b := e.qtCustomer(t), e.qtCustomer(t)
		noTerms := e.acCustomer(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		eur, inr := e.qtAccountID(t, b, "EUR"), e.qtAccountID(t, b, "INR")
		ext := e.qtExternal(t, b, "1234561234")
		e.acFund(t, src, 50000)
		srcNoTerms := e.qtAccountID(t, noTerms, "USD")
		e.acFund(t, srcNoTerms, 50000)
		raw := func(amount string) string {
			return `{"source":{"sourceType":"ACCOUNT","accountId":"` + src + `"},"destination":{"destinationType":"ACCOUNT","accountId":"` +
				dst + `"},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":` + amount + `}`
		}
		without := func(field string) cobj {
			body := qtBody(src, dst, "SENDING", 1000)
			delete(body, field)
			return body
		}
		railTo := func(rail string) cobj {
			return cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": rail}
		}

		t.Run("R-QUOTE-41 no webhook endpoint is 400 WEBHOOK_ENDPOINT_NOT_SET", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 1000), 400, "WEBHOOK_ENDPOINT_NOT_SET")
			before := e.qtCounts(t)
			r := e.qdo("POST", "/transfer-out", cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": ext}, "amount": 1000})
			expect(t, r, http.StatusBadRequest, "WEBHOOK_ENDPOINT_NOT_SET")
			if e.qtCounts(t) != before {
				t.Fatal("a refused transfer-out changed something")
			}
			e.qtWebhook(t)
			e.qtQuote(t, qtBody(src, dst, "SENDING", 1000))
		})
		t.Run("R-QUOTE-02 source is required", func(t *testing.T) {
			e.qtRefusal(t, a, without("source"), 400, "INVALID_INPUT", "source=required")
		})
		t.Run("R-QUOTE-05 destination is required", func(t *testing.T) {
			e.qtRefusal(t, a, without("destination"), 400, "INVALID_INPUT", "destination=required")
		})
		t.Run("R-QUOTE-07 a UMA_ADDRESS destination requires currency", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 1000, "lookupId", "Lookup:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b",
				"destination", cobj{"destinationType": "UMA_ADDRESS", "umaAddress": "$bob@example.com"}),
				400, "INVALID_INPUT", "destination.currency=required")
		})
		t.Run("R-QUOTE-09 lockedCurrencySide is required, SENDING or RECEIVING", func(t *testing.T) {
			e.qtRefusal(t, a, without("lockedCurrencySide"), 400, "INVALID_INPUT", "lockedCurrencySide=required")
			e.qtRefusal(t, a, qtBody(src, dst, "BOTH", 1000), 400, "INVALID_INPUT", "lockedCurrencySide=enum")
			for _, side := range []string{"SENDING", "RECEIVING"} {
				if q := e.qtQuote(t, qtBody(src, dst, side, 1000)); q["lockedCurrencySide"] != side {
					t.Fatalf("%s: %v", side, q["lockedCurrencySide"])
				}
			}
		})
		t.Run("R-QUOTE-10 lockedCurrencyAmount is a required integer", func(t *testing.T) {
			e.qtRefusal(t, a, without("lockedCurrencyAmount"), 400, "INVALID_INPUT", "lockedCurrencyAmount=required")
			e.qtRefusal(t, a, raw("10.5"), 400, "INVALID_INPUT", "lockedCurrencyAmount=type")
			e.qtRefusal(t, a, raw(`"1000"`), 400, "INVALID_INPUT", "lockedCurrencyAmount=type")
			e.qtRefusal(t, a, raw("0"), 400, "INVALID_INPUT", "lockedCurrencyAmount=minimum")
		})
		t.Run("R-QUOTE-13 remittanceInformation is at most 80 characters", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 1000, "remittanceInformation", strings.Repeat("é", 81)),
				400, "INVALID_INPUT", "remittanceInformation=maxLength")
			e.qtQuote(t, qtBody(src, dst, "SENDING", 1000, "remittanceInformation", strings.Repeat("é", 80)))
		})
		t.Run("R-QUOTE-15 statementDescriptor is at most 10 characters on ACH", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, ext, "SENDING", 1000, "statementDescriptor", strings.Repeat("x", 11), "destination", railTo("ACH")),
				400, "INVALID_INPUT", "statementDescriptor=maxLength")
			q := e.qtQuote(t, qtBody(src, ext, "SENDING", 1000, "statementDescriptor", strings.Repeat("x", 10), "destination", railTo("ACH")))
			if q["statementDescriptor"] != strings.Repeat("x", 10) {
				t.Fatalf("%v", q)
			}
		})
		t.Run("R-QUOTE-16 statementDescriptor without an ACH entry is 400 INVALID_INPUT", func(t *testing.T) {
			for _, rail := range []string{"WIRE", "RTP"} {
				e.qtRefusal(t, a, qtBody(src, ext, "SENDING", 10000, "statementDescriptor", "RENT", "destination", railTo(rail)),
					400, "INVALID_INPUT", "statementDescriptor")
			}
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 1000, "statementDescriptor", "RENT"), 400, "INVALID_INPUT", "statementDescriptor")
		})
		t.Run("R-QUOTE-19 an INR payout needs purposeOfPayment", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, inr, "SENDING", 10000), 400, "INVALID_INPUT", "purposeOfPayment=required")
			q := e.qtQuote(t, qtBody(src, inr, "SENDING", 10000, "purposeOfPayment", "FAMILY_SUPPORT"))
			if q["purposeOfPayment"] != "FAMILY_SUPPORT" {
				t.Fatalf("purpose not echoed: %v", q["purposeOfPayment"])
			}
		})
		t.Run("R-QUOTE-20 platformFeeOverride needs a USD source", func(t *testing.T) {
			eurSrc := e.qtAccountID(t, a, "EUR")
			override := cobj{"platformFixedFee": cobj{"amount": 10, "currency": "EUR"}, "platformVariableFeeBps": 10}
			e.qtRefusal(t, a, qtBody(eurSrc, dst, "SENDING", 1000, "platformFeeOverride", override), 400, "INVALID_INPUT", "platformFeeOverride")
			usd := cobj{"platformFixedFee": cobj{"amount": 10, "currency": "USD"}, "platformVariableFeeBps": 10}
			if q := e.qtQuote(t, qtBody(src, dst, "SENDING", 10000, "platformFeeOverride", usd)); qnum(t, q, "platformFeesIncluded") != 20 {
				t.Fatalf("USD override: platformFeesIncluded %v, want 10 + 10 bps of 10000", q["platformFeesIncluded"])
			}
		})
		t.Run("R-QUOTE-36 an unknown quote is 404 QUOTE_NOT_FOUND", func(t *testing.T) {
			before := e.qtCounts(t)
			expect(t, e.qdo("GET", "/quotes/Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), 404, "QUOTE_NOT_FOUND")
			expect(t, e.qdo("POST", "/quotes/Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b/execute", nil), 404, "QUOTE_NOT_FOUND")
			if e.qtCounts(t) != before {
				t.Fatal("a 404 changed something")
			}
		})
		t.Run("R-QUOTE-38 an amount below the bounds is 400 AMOUNT_OUT_OF_RANGE", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, eur, "SENDING", 50), 400, "AMOUNT_OUT_OF_RANGE")
		})
		t.Run("R-QUOTE-39 an amount above the single-transaction maximum is 400 TRANSACTION_SIZE_LIMIT_EXCEEDED", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, eur, "SENDING", 100_000_001), 400, "TRANSACTION_SIZE_LIMIT_EXCEEDED")
		})
		t.Run("R-QUOTE-40 a sender without end-user terms gets END_USER_TERMS_NOT_ACCEPTED", func(t *testing.T) {
			before := e.qtCounts(t)
			r := e.qdo("POST", "/quotes", qtBody(srcNoTerms, dst, "SENDING", 1000))
			if r.Code(t) != "END_USER_TERMS_NOT_ACCEPTED" || e.qtCounts(t) != before {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
		t.Run("SELF_PAYMENT: the same account on both sides", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody(src, src, "SENDING", 1000), 400, "SELF_PAYMENT")
		})
		t.Run("ACCOUNT_NOT_FOUND: an unknown source account", func(t *testing.T) {
			e.qtRefusal(t, a, qtBody("InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", dst, "SENDING", 1000), 404, "ACCOUNT_NOT_FOUND")
		})
		t.Run("INSUFFICIENT_FUNDS: immediate and later execution refused, nothing moved", func(t *testing.T) {
			avail := e.qtBalance(t, a, "USD")
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", avail+1, "immediatelyExecute", true), 400, "INSUFFICIENT_FUNDS")
			q := e.qtQuote(t, qtBody(src, dst, "SENDING", avail-100))
			q2 := e.qtQuote(t, qtBody(src, dst, "SENDING", 200))
			expect(t, e.qdo("POST", "/quotes/"+q["id"].(string)+"/execute", nil), 200, "")
			before := e.qtCounts(t)
			expect(t, e.qdo("POST", "/quotes/"+q2["id"].(string)+"/execute", nil), 400, "INSUFFICIENT_FUNDS")
			if e.qtCounts(t) != before {
				t.Fatal("refused execute changed something")
			}
			if m := e.qdo("GET", "/quotes/"+q2["id"].(string), nil).JSON(t); m["status"] != "PENDING" {
				t.Fatalf("refused execute: quote %v", m["status"])
			}
		})
		t.Run("DAILY_VOLUME_LIMIT_EXCEEDED: 429 over the tenant's executed volume", func(t *testing.T) {
			e.acFund(t, src, 50000)
			used := int64(50000 - 100) // executed above
			if err := e.srv.quoteService().SetDailyVolumeLimit(context.Background(), e.acTenant(), used+5000); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.srv.quoteService().SetDailyVolumeLimit(context.Background(), e.acTenant(), 0) })
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 5001), 429, "DAILY_VOLUME_LIMIT_EXCEEDED")
			e.qtQuote(t, qtBody(src, dst, "SENDING", 5000, "immediatelyExecute", true))
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 1, "immediatelyExecute", true), 429, "DAILY_VOLUME_LIMIT_EXCEEDED")
		})
		e.acAudit(t)
	})
}
