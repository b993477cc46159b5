package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

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

// R-QUOTE-24, R-QUOTE-25, R-QUOTE-26: expiresAt is about 5 minutes after
// createdAt; past it the quote reads EXPIRED (and its transaction too) and
// stays EXPIRED (terminal: later reads, the sweep and further executes do
// not move it), and executing is 400 QUOTE_EXPIRED with nothing moved and
// nothing created. ExpireDue sweeps the quotes nobody reads.
func TestQuotes_Expiry_R_QUOTE_24_R_QUOTE_25_R_QUOTE_26(t *testing.T) {
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
		status := func(path string) any {
			t.Helper()
			r := e.qdo("GET", path, nil)
			expect(t, r, http.StatusOK, "")
			return r.JSON(t)["status"]
		}
		move(expires.Add(-time.Second))
		if s := status("/quotes/" + q["id"].(string)); s != "PENDING" {
			t.Fatalf("before expiry: %v", s)
		}
		move(expires.Add(time.Second))
		before, balA, balB := e.qtCounts(t), e.qtBalance(t, a, "USD"), e.qtBalance(t, b, "USD")
		expect(t, e.qdo("POST", "/quotes/"+q["id"].(string)+"/execute", nil), http.StatusBadRequest, "QUOTE_EXPIRED")
		if after := e.qtCounts(t); after != before {
			t.Fatalf("a refused execute changed something:\n%s\n%s", before, after)
		}
		if e.qtBalance(t, a, "USD") != balA || e.qtBalance(t, b, "USD") != balB || balA != 10000 || balB != 0 {
			t.Fatal("an expired quote moved money")
		}
		if s := status("/quotes/" + q["id"].(string)); s != "EXPIRED" {
			t.Fatalf("after expiry: %v", s)
		}
		if s := status("/transactions/" + q["transactionId"].(string)); s != "EXPIRED" {
			t.Fatalf("transaction after expiry: %v", s)
		}
		n, err := e.srv.quoteService().ExpireDue(context.Background(), 100)
		if err != nil || n != 1 {
			t.Fatalf("ExpireDue: %d %v", n, err)
		}
		row, err := e.db.Read().GetQuote(context.Background(), e.acTenant(), q2["id"].(string), false)
		if err != nil || row.Status != "EXPIRED" {
			t.Fatalf("swept quote: %v %v", row.Status, err)
		}
		// Terminal: a day later, after another sweep and another execute,
		// both quotes and their transactions still read EXPIRED.
		move(expires.Add(24 * time.Hour))
		if n, err := e.srv.quoteService().ExpireDue(context.Background(), 100); err != nil || n != 0 {
			t.Fatalf("ExpireDue again: %d %v", n, err)
		}
		for _, x := range []map[string]any{q, q2} {
			expect(t, e.qdo("POST", "/quotes/"+x["id"].(string)+"/execute", nil), http.StatusBadRequest, "QUOTE_EXPIRED")
			if s := status("/quotes/" + x["id"].(string)); s != "EXPIRED" {
				t.Fatalf("quote later: %v", s)
			}
			if s := status("/transactions/" + x["transactionId"].(string)); s != "EXPIRED" {
				t.Fatalf("transaction later: %v", s)
			}
		}
		if e.qtBalance(t, a, "USD") != 10000 {
			t.Fatal("expired quotes moved money")
		}
		e.acAudit(t)
	})
}

// R-QUOTE-04, R-QUOTE-28, R-QUOTE-31 (quote side): a REALTIME_FUNDING customer source is
// funded through paymentInstructions (the customer's account funding
// instructions); execute is refused; when the funds arrive (the rails'
// sandbox deposit credits the funding account and calls ExecuteFunded in
// the same database transaction) the quote proceeds without execute.
func TestQuotes_PaymentInstructionsSource(t *testing.T) {
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
