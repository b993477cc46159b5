package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Every refusal of POST /quotes and execute, with its documented input;
// none changes anything (ledger, accounts, transactions, quotes, balances).
// R-QUOTE-02, 05, 09, 10, 13, 15, 16, 19, 20, 36, 38, 39, 40, 41,
// R-ERR INSUFFICIENT_FUNDS, SELF_PAYMENT, 429 DAILY_VOLUME_LIMIT_EXCEEDED.
func TestQuotes_Errors_ChangeNothing_R_QUOTE_02_to_41(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD", "EUR", "INR")
		a := e.qtCustomer(t)
		b := e.qtCustomer(t)
		noTerms := e.acCustomer(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		eur, inr := e.qtAccountID(t, b, "EUR"), e.qtAccountID(t, b, "INR")
		e.acFund(t, src, 50000)
		srcNoTerms := e.qtAccountID(t, noTerms, "USD")
		e.acFund(t, srcNoTerms, 50000)

		check := func(name string, body any, status int, code string, fields ...string) {
			t.Helper()
			before, bal := e.qtCounts(t), e.qtBalance(t, a, "USD")
			r := e.do("POST", "/quotes", body)
			if r.Status != status || r.Code(t) != code {
				t.Fatalf("%s: %d %s, want %d %s: %s", name, r.Status, r.Code(t), status, code, r.Body)
			}
			fe := fieldErrors(t, r)
			for _, f := range fields {
				if _, ok := fe[f]; !ok {
					t.Fatalf("%s: no error on %s: %s", name, f, r.Body)
				}
			}
			if e.qtCounts(t) != before || e.qtBalance(t, a, "USD") != bal {
				t.Fatalf("%s changed something", name)
			}
		}
		// Before a webhook endpoint is configured (R-QUOTE-41).
		check("no webhook", qtBody(src, dst, "SENDING", 1000), 400, "WEBHOOK_ENDPOINT_NOT_SET")
		e.qtWebhook(t)

		check("empty", cobj{}, 400, "INVALID_INPUT", "source", "destination", "lockedCurrencySide", "lockedCurrencyAmount")
		check("bad side", qtBody(src, dst, "BOTH", 1000), 400, "INVALID_INPUT", "lockedCurrencySide")
		check("decimal amount", `{"source":{"sourceType":"ACCOUNT","accountId":"`+src+`"},"destination":{"destinationType":"ACCOUNT","accountId":"`+dst+`"},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":10.5}`,
			400, "INVALID_INPUT")
		check("remittance 81", qtBody(src, dst, "SENDING", 1000, "remittanceInformation", strings.Repeat("x", 81)), 400, "INVALID_INPUT", "remittanceInformation")
		check("descriptor 11", qtBody(src, dst, "SENDING", 1000, "statementDescriptor", strings.Repeat("x", 11)), 400, "INVALID_INPUT", "statementDescriptor")
		check("descriptor not ACH", qtBody(src, dst, "SENDING", 1000, "statementDescriptor", "RENT"), 400, "INVALID_INPUT", "statementDescriptor")
		check("purpose enum", qtBody(src, dst, "SENDING", 1000, "purposeOfPayment", "FUN"), 400, "INVALID_INPUT", "purposeOfPayment")
		check("INR needs purpose", qtBody(src, inr, "SENDING", 10000), 400, "INVALID_INPUT", "purposeOfPayment")
		eurSrc := e.qtAccountID(t, a, "EUR")
		check("override non-USD", qtBody(eurSrc, dst, "SENDING", 1000, "platformFeeOverride",
			cobj{"platformFixedFee": cobj{"amount": 10, "currency": "EUR"}, "platformVariableFeeBps": 10}), 400, "INVALID_INPUT", "platformFeeOverride")
		check("unknown account", qtBody("InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", dst, "SENDING", 1000), 404, "ACCOUNT_NOT_FOUND")
		check("self", qtBody(src, src, "SENDING", 1000), 400, "SELF_PAYMENT")
		check("terms", qtBody(srcNoTerms, dst, "SENDING", 1000), 400, "END_USER_TERMS_NOT_ACCEPTED")
		check("below minimum", qtBody(src, eur, "SENDING", 50), 400, "AMOUNT_OUT_OF_RANGE")
		check("size limit", qtBody(src, eur, "SENDING", 100_000_001), 400, "TRANSACTION_SIZE_LIMIT_EXCEEDED")
		check("insufficient", qtBody(src, dst, "SENDING", 50001, "immediatelyExecute", true), 400, "INSUFFICIENT_FUNDS")
		check("UMA without lookup", cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
			"destination":        cobj{"destinationType": "UMA_ADDRESS", "umaAddress": "$bob@example.com"},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 1000}, 400, "INVALID_INPUT", "destination.currency", "lookupId")

		// Execute refusals.
		expect(t, e.do("GET", "/quotes/Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), 404, "QUOTE_NOT_FOUND")
		expect(t, e.do("POST", "/quotes/Quote:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b/execute", nil), 404, "QUOTE_NOT_FOUND")
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 40000))
		e.acFund(t, src, 0+1) // 50001 available
		q2 := e.qtQuote(t, qtBody(src, dst, "SENDING", 20000))
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil), 200, "")
		before := e.qtCounts(t)
		expect(t, e.do("POST", "/quotes/"+q2["id"].(string)+"/execute", nil), 400, "INSUFFICIENT_FUNDS")
		if e.qtCounts(t) != before {
			t.Fatal("refused execute changed something")
		}
		if m := e.do("GET", "/quotes/"+q2["id"].(string), nil).JSON(t); m["status"] != "PENDING" {
			t.Fatalf("refused execute: quote %v", m["status"])
		}

		// Daily volume (429), configurable per tenant; executed volume only.
		if err := e.srv.quoteService().SetDailyVolumeLimit(context.Background(), e.acTenant(), 45000); err != nil {
			t.Fatal(err)
		}
		check("daily volume", qtBody(src, dst, "SENDING", 6000), 429, "DAILY_VOLUME_LIMIT_EXCEEDED")
		e.qtQuote(t, qtBody(src, dst, "SENDING", 5000, "immediatelyExecute", true))
		e.acAudit(t)
	})
}

// R-AUTH-05: a VIEW token may read a quote but neither create nor execute
// one; a TRANSACT token may.
func TestQuotes_ViewTokenRefused_R_AUTH_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10000)
		view := e.newToken(t, "VIEW")
		before := e.qtCounts(t)
		r := e.do("POST", "/quotes", qtBody(src, dst, "SENDING", 1000), withCreds(view))
		expect(t, r, http.StatusForbidden, "FORBIDDEN")
		if e.qtCounts(t) != before {
			t.Fatal("VIEW token created something")
		}
		transact := e.newToken(t, "TRANSACT")
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 1000), withCreds(transact))
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("GET", "/quotes/"+q["id"].(string), nil, withCreds(view)), http.StatusOK, "")
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil, withCreds(transact)), http.StatusOK, "")
	})
}

// R-IDEM-06, R-IDEM-10 (quotes side): POST /quotes needs no key; with one, a
// replay answers the same quote and debits once.
func TestQuotes_IdempotentReplay_R_IDEM_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10000)
		body := qtBody(src, dst, "SENDING", 3000, "immediatelyExecute", true)
		first := e.qtQuote(t, body, withHeader("Idempotency-Key", "quote-1"))
		second := e.do("POST", "/quotes", body, withHeader("Idempotency-Key", "quote-1"))
		expect(t, second, http.StatusOK, "")
		if second.JSON(t)["id"] != first["id"] || second.JSON(t)["transactionId"] != first["transactionId"] {
			t.Fatalf("replay answered another quote: %s", second.Body)
		}
		if got := e.qtBalance(t, a, "USD"); got != 7000 {
			t.Fatalf("balance %d after replay: debited twice?", got)
		}
		e.acAudit(t)
	})
}

// R-QUOTE-24, 25, 26: expiresAt is about 5 minutes after createdAt; past it
// the quote reads EXPIRED (and its transaction too), stays EXPIRED, and
// executing is 400 QUOTE_EXPIRED with nothing moved. ExpireDue sweeps the
// quotes nobody reads.
func TestQuotes_Expiry_R_QUOTE_24_25_26(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.driveByHand() // sweeps by hand, expecting to find the work undone
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10000)
		start := time.Now().UTC().Truncate(time.Second)
		move := e.acClock(t, start)
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 1000))
		q2 := e.qtQuote(t, qtBody(src, dst, "SENDING", 1000))
		created, _ := time.Parse(time.RFC3339Nano, q["createdAt"].(string))
		expires, _ := time.Parse(time.RFC3339Nano, q["expiresAt"].(string))
		if d := expires.Sub(created); d < 5*time.Minute || d > 10*time.Minute {
			t.Fatalf("expiry %s", d)
		}
		move(expires.Add(-time.Second))
		if m := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t); m["status"] != "PENDING" {
			t.Fatalf("before expiry: %v", m["status"])
		}
		move(expires.Add(time.Second))
		before := e.qtCounts(t)
		x := e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil)
		expect(t, x, http.StatusBadRequest, "QUOTE_EXPIRED")
		if m := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t); m["status"] != "EXPIRED" {
			t.Fatalf("after expiry: %v", m["status"])
		}
		if m := e.do("GET", "/transactions/"+q["transactionId"].(string), nil).JSON(t); m["status"] != "EXPIRED" {
			t.Fatalf("transaction after expiry: %v", m["status"])
		}
		if e.qtBalance(t, a, "USD") != 10000 {
			t.Fatal("expired quote moved money")
		}
		_ = before
		n, err := e.srv.quoteService().ExpireDue(context.Background(), 100)
		if err != nil || n != 1 {
			t.Fatalf("ExpireDue: %d %v", n, err)
		}
		row, err := e.db.Read().GetQuote(context.Background(), e.acTenant(), q2["id"].(string), false)
		if err != nil || row.Status != "EXPIRED" {
			t.Fatalf("swept quote: %v %v", row.Status, err)
		}
		expect(t, e.do("POST", "/quotes/"+q2["id"].(string)+"/execute", nil), http.StatusBadRequest, "QUOTE_EXPIRED")
		e.acAudit(t)
	})
}

// R-QUOTE-04, 28, 31 (quote side): a REALTIME_FUNDING customer source is
// funded through paymentInstructions (the customer's account funding
// instructions); execute is refused; when the funds arrive (the rails'
// sandbox deposit credits the funding account and calls ExecuteFunded in
// the same database transaction) the quote proceeds without execute.
func TestQuotes_PaymentInstructionsSource_R_QUOTE_04_28(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		dst := e.qtAccountID(t, b, "USD")
		body := cobj{"source": cobj{"sourceType": "REALTIME_FUNDING", "customerId": a, "currency": "USD"},
			"destination":        cobj{"destinationType": "ACCOUNT", "accountId": dst},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 2500}
		q := e.qtQuote(t, body)
		pi, ok := q["paymentInstructions"].([]any)
		if !ok || len(pi) == 0 {
			t.Fatalf("paymentInstructions: %v", q["paymentInstructions"])
		}
		if _, ok := pi[0].(map[string]any)["accountOrWalletInfo"]; !ok {
			t.Fatalf("instruction: %v", pi[0])
		}
		before := e.qtCounts(t)
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/quotes", cwith(body, "immediatelyExecute", true)), http.StatusBadRequest, "INVALID_INPUT")
		if e.qtCounts(t) != before {
			t.Fatal("refusals changed something")
		}
		svc := e.srv.quoteService()
		ctx := context.Background()
		tn := e.acTenant()
		acct, amount, cur, err := svc.FundingAccount(ctx, e.db.Read(), tn, q["id"].(string))
		if err != nil || amount != 2500 || cur != "USD" || acct != e.qtAccountID(t, a, "USD") {
			t.Fatalf("FundingAccount: %s %d %s %v", acct, amount, cur, err)
		}
		led := ledger.New(e.db)
		err = e.db.InTx(ctx, func(tx *store.Tx) error {
			world, err := led.SystemAccountTx(ctx, tx, tn, ledger.CodeWorld, "USD")
			if err != nil {
				return err
			}
			ia, err := tx.GetInternalAccount(ctx, tn, acct)
			if err != nil {
				return err
			}
			if _, err := led.Apply(ctx, tx, tn, []ledger.TransferSpec{{Postings: []ledger.PostingSpec{
				{AccountID: world.ID, Currency: "USD", Amount: -amount}, {AccountID: ia.LedgerAccountID, Currency: "USD", Amount: amount}}}}); err != nil {
				return err
			}
			_, err = svc.ExecuteFunded(ctx, tx, tn, q["id"].(string))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if m := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t); m["status"] != "COMPLETED" {
			t.Fatalf("funded quote: %v", m["status"])
		}
		if e.qtBalance(t, b, "USD") != 2500 || e.qtBalance(t, a, "USD") != 0 {
			t.Fatal("funded quote did not move the money")
		}
		e.acAudit(t)
	})
}
