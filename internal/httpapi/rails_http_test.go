package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/rails"
)

// railsNow makes every rail step due at once and runs the rail workers
// until nothing is due.
func (e *env) railsDrain(t *testing.T) {
	t.Helper()
	e.driveByHand() // from here on the test runs the rail steps
	if err := rails.NewRunner(e.db, rails.Options{}).Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func railsFactorZero(t *testing.T) {
	old := rails.ClockFactor()
	rails.SetClockFactor(0)
	t.Cleanup(func() { rails.SetClockFactor(old) })
}

func railDetailsOf(t *testing.T, x map[string]any, side string) map[string]any {
	t.Helper()
	s, _ := x[side].(map[string]any)
	d, ok := s["railDetails"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no railDetails: %v", side, x[side])
	}
	return d
}

// R-TXN-34, R-TXN-35, R-TXN-45: a sandbox incoming ACH
// deposit, returned (FAILED, INCOMING_PAYMENT.FAILED, railDetails RETURNED),
// dishonored (COMPLETED, RETURN_DISHONORED), contested (RETURN_CONTESTED).
func TestRails_IncomingACHReturn(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		c := e.acCustomer(t)
		acct := e.acAccount(t, c, "USD")["id"].(string)
		r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 12_500, "remittanceInformation": "rent"})
		expect(t, r, http.StatusOK, "")
		x := r.JSON(t)
		id := x["id"].(string)
		d := railDetailsOf(t, x, "source")
		if x["status"] != "COMPLETED" || x["type"] != "INCOMING" || d["paymentRail"] != "ACH" || d["status"] != "SETTLED" ||
			len(d["traceNumber"].(string)) != 15 || d["addenda"] != "rent" {
			t.Fatalf("deposit %v", x)
		}
		// R-TXN-25: the source type is one of the spec's (an outside
		// funding source is REALTIME_FUNDING); it was EXTERNAL_ACCOUNT.
		if src := x["source"].(map[string]any); src["sourceType"] != "REALTIME_FUNDING" || src["accountHolderName"] == nil {
			t.Fatalf("deposit source %v", src)
		}
		if b := qtAmount(t, e.acAccount(t, c, "USD"), "balance"); b != 12_500 {
			t.Fatalf("balance %d", b)
		}
		expect(t, e.do("POST", "/sandbox/transactions/"+id+"/dishonor", nil), http.StatusConflict, "CONFLICT")

		r = e.do("POST", "/sandbox/transactions/"+id+"/return", nil)
		expect(t, r, http.StatusOK, "")
		if x = r.JSON(t); x["status"] != "FAILED" || railDetailsOf(t, x, "source")["status"] != "RETURNED" ||
			railDetailsOf(t, x, "source")["returnedAt"] == nil {
			t.Fatalf("returned %v", x)
		}
		if b := qtAmount(t, e.acAccount(t, c, "USD"), "balance"); b != 0 {
			t.Fatalf("balance after return %d", b)
		}
		r = e.do("POST", "/sandbox/transactions/"+id+"/dishonor", nil)
		expect(t, r, http.StatusOK, "")
		if x = r.JSON(t); x["status"] != "COMPLETED" || railDetailsOf(t, x, "source")["status"] != "RETURN_DISHONORED" {
			t.Fatalf("dishonored %v", x)
		}
		r = e.do("POST", "/sandbox/transactions/"+id+"/contest", nil)
		expect(t, r, http.StatusOK, "")
		if x = r.JSON(t); x["status"] != "COMPLETED" || railDetailsOf(t, x, "source")["status"] != "RETURN_CONTESTED" {
			t.Fatalf("contested %v", x)
		}
		var types []string
		for _, ev := range e.acEvents(t, id) {
			types = append(types, ev["type"].(string))
		}
		want := []string{"INCOMING_PAYMENT.COMPLETED", "INCOMING_PAYMENT.FAILED", "INCOMING_PAYMENT.COMPLETED"}
		if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] {
			t.Fatalf("events %v", types)
		}
		expect(t, e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 1}, withCreds(e.production)),
			http.StatusForbidden, "")
		expect(t, e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 0, "paymentRail": "SWIFT"}),
			http.StatusBadRequest, "INVALID_INPUT")
		e.acAudit(t)
	})
}

// TestRails_ApproveRejectCancel_R_TXN_05: approve and reject apply only to
// a payment pending platform approval (sandbox: amount ending 907), cancel
// only to an unsettled ACH or wire payout.
func TestRails_ApproveRejectCancel_R_TXN_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		c := e.acCustomer(t)
		acct := e.acAccount(t, c, "USD")["id"].(string)
		pending := func() string {
			r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 3_907, "paymentRail": "WIRE"})
			expect(t, r, http.StatusOK, "")
			if x := r.JSON(t); x["status"] != "PENDING" {
				t.Fatalf("%v", x)
			}
			return r.JSON(t)["id"].(string)
		}
		a := pending()
		r := e.do("POST", "/transactions/"+a+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if x := r.JSON(t); x["status"] != "COMPLETED" || railDetailsOf(t, x, "source")["imad"] == nil {
			t.Fatalf("approved %v", x)
		}
		if b := qtAmount(t, e.acAccount(t, c, "USD"), "balance"); b != 3_907 {
			t.Fatalf("balance %d", b)
		}
		expect(t, e.do("POST", "/transactions/"+a+"/approve", cobj{}), http.StatusConflict, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		expect(t, e.do("POST", "/transactions/"+a+"/reject", nil), http.StatusConflict, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		expect(t, e.do("POST", "/transactions/"+a+"/cancel", nil), http.StatusConflict, "TRANSACTION_NOT_CANCELLABLE")

		b := pending()
		r = e.do("POST", "/transactions/"+b+"/reject", cobj{"reason": "RESTRICTED_JURISDICTION"})
		expect(t, r, http.StatusOK, "")
		if x := r.JSON(t); x["status"] != "FAILED" {
			t.Fatalf("rejected %v", x)
		}
		expect(t, e.do("POST", "/transactions/"+b+"/approve", nil), http.StatusConflict, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		unknown := "Transaction:00000000-0000-7000-8000-000000000000"
		expect(t, e.do("POST", "/transactions/"+unknown+"/approve", nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		expect(t, e.do("POST", "/transactions/"+unknown+"/cancel", nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		expect(t, e.do("POST", "/transactions/"+a+"/reject", cobj{"nope": 1}), http.StatusBadRequest, "INVALID_INPUT")
		e.acAudit(t)
	})
}

// TestRails_SandboxSend_R_QUOTE_31: paying a quote's payment instructions
// moves the PENDING quote on without execute.
func TestRails_SandboxSend_R_QUOTE_31(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		dst := e.qtAccountID(t, b, "USD")
		q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "REALTIME_FUNDING", "customerId": a, "currency": "USD"},
			"destination":        cobj{"destinationType": "ACCOUNT", "accountId": dst},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 2500})
		qid := q["id"].(string)
		expect(t, e.do("POST", "/sandbox/send", cobj{"quoteId": qid, "currencyCode": "EUR"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/sandbox/send", cobj{"quoteId": qid, "currencyCode": "USD", "currencyAmount": 1}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/sandbox/send", cobj{"quoteId": qid, "currencyCode": "USD"}, withCreds(e.production)), http.StatusForbidden, "")
		r := e.do("POST", "/sandbox/send", cobj{"quoteId": qid, "currencyCode": "USD", "currencyAmount": 2500})
		expect(t, r, http.StatusOK, "")
		if x := r.JSON(t); x["id"] != q["transactionId"] {
			t.Fatalf("send answered %v, want the quote's transaction %v", x["id"], q["transactionId"])
		}
		e.railsDrain(t)
		got := e.do("GET", "/quotes/"+qid, nil).JSON(t)
		if got["status"] == "PENDING" {
			t.Fatalf("quote still PENDING after the deposit: %v", got)
		}
		expect(t, e.do("POST", "/sandbox/send", cobj{"quoteId": qid, "currencyCode": "USD"}), http.StatusConflict, "")
		expect(t, e.do("POST", "/sandbox/send", cobj{"quoteId": "Quote:00000000-0000-7000-8000-000000000000", "currencyCode": "USD"}),
			http.StatusNotFound, "QUOTE_NOT_FOUND")
		e.acAudit(t)
	})
}

// R-TXN-33, R-TXN-43 (the quotes side): quotes executed to an external
// US account travel over their rail: RTP completes (paymentRail, railDetails
// SETTLED), an ACH amount ending 906 completes then is returned
// (PAYOUT_RETURNED, refund, money back), an unsettled ACH payout can be
// cancelled.
func TestRails_PayoutsOverQuotes(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		expect(t, e.do("POST", "/sandbox/internal-accounts/"+src+"/fund", cobj{"amount": 1_000_000}), http.StatusOK, "")
		ext := e.eaCreate(t, "/customers/external-accounts", eaUSD(a, "123456789"))["id"].(string)
		pay := func(rail string, amount int64) map[string]any {
			q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
				"destination":        cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": rail},
				"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "immediatelyExecute": true})
			return q
		}
		q := pay("RTP", 10_000)
		e.railsDrain(t)
		x := e.do("GET", "/transactions/"+q["transactionId"].(string), nil).JSON(t)
		if x["status"] != "COMPLETED" || x["paymentRail"] != "RTP" || x["settledAt"] == nil ||
			railDetailsOf(t, x, "destination")["status"] != "SETTLED" {
			t.Fatalf("RTP payout %v", x)
		}
		before := e.qtBalance(t, a, "USD")
		q = pay("ACH", 20_906)
		e.railsDrain(t)
		x = e.do("GET", "/transactions/"+q["transactionId"].(string), nil).JSON(t)
		d := railDetailsOf(t, x, "destination")
		if x["status"] != "FAILED" || x["failureReason"] != "PAYOUT_RETURNED" || d["status"] != "RETURNED" ||
			d["returnedAt"] == nil || x["refund"] == nil {
			t.Fatalf("returned payout %v", x)
		}
		if got := e.qtBalance(t, a, "USD"); got != before {
			t.Fatalf("balance %d after the return, want %d", got, before)
		}
		expect(t, e.do("POST", "/transactions/"+x["id"].(string)+"/cancel", nil), http.StatusConflict, "TRANSACTION_NOT_CANCELLABLE")

		rails.SetClockFactor(1) // the next payout stays in flight
		q = pay("ACH", 5_000)
		x = e.do("GET", "/transactions/"+q["transactionId"].(string), nil).JSON(t)
		if x["status"] != "PROCESSING" || railDetailsOf(t, x, "destination")["status"] != "PENDING" {
			t.Fatalf("in flight %v", x)
		}
		r := e.do("POST", "/transactions/"+x["id"].(string)+"/cancel", cobj{"reason": "REQUESTED_AFTER_HOURS"})
		expect(t, r, http.StatusOK, "")
		if x = r.JSON(t); x["status"] != "FAILED" || x["refund"] == nil {
			t.Fatalf("cancelled %v", x)
		}
		if got := e.qtBalance(t, a, "USD"); got != before {
			t.Fatalf("balance %d after the cancel, want %d", got, before)
		}
		rails.SetClockFactor(0)
		e.acAudit(t)
	})
}
