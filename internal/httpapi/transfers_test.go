package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
)

// qtExternal creates a validated US bank account for a customer.
func (e *env) qtExternal(t *testing.T, customerID, accountNumber string) string {
	t.Helper()
	a := e.eaCreate(t, eaCustomers, eaUSD(customerID, accountNumber))
	return a["id"].(string)
}

// R-QUOTE-06, R-QUOTE-16, R-VER-05: an external
// destination is reserved with a ledger HOLD (source −S pending, clearing
// +R) and handed to the rails; the transaction is PROCESSING. The rail
// defaults when omitted; an unsupported rail, a descriptor on a non-ACH
// rail and the ACH_SAME_DAY per-entry limit are refused and change nothing.
func TestQuotes_ExternalDestination(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		ext := e.qtExternal(t, b, "1234561234")
		e.acFund(t, src, 200_000_000)
		q := e.qtQuote(t, qtBody(src, ext, "SENDING", 10000, "statementDescriptor", "RENT", "remittanceInformation", "Invoice 42"))
		if q["destination"].(map[string]any)["paymentRail"] != "ACH" {
			t.Fatalf("default rail: %v", q["destination"])
		}
		x := e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil)
		expect(t, x, http.StatusOK, "")
		tx := e.do("GET", "/transactions/"+q["transactionId"].(string), nil).JSON(t)
		if tx["status"] != "PROCESSING" && tx["status"] != "COMPLETED" {
			t.Fatalf("payout transaction %v", tx["status"])
		}
		bal, err := ledger.New(e.db).Balance(context.Background(), e.acTenant(), src)
		if err == nil && bal.Available != 200_000_000-10000 {
			t.Fatalf("available after hold %d", bal.Available)
		}
		e.acAudit(t)

		check := func(name string, body any, status int, code string) {
			t.Helper()
			before := e.qtCounts(t)
			r := e.do("POST", "/quotes", body)
			if r.Status != status || r.Code(t) != code {
				t.Fatalf("%s: %d %s: %s", name, r.Status, r.Code(t), r.Body)
			}
			if e.qtCounts(t) != before {
				t.Fatalf("%s changed something", name)
			}
		}
		check("unsupported rail", qtBody(src, ext, "SENDING", 1000, "destination", cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": "UPI"}), 400, "INVALID_INPUT")
		check("descriptor on wire", qtBody(src, ext, "SENDING", 10000, "statementDescriptor", "RENT",
			"destination", cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": "WIRE"}), 400, "INVALID_INPUT")
		sameDay := cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": "ACH_SAME_DAY"}
		check("ACH_SAME_DAY above limit", qtBody(src, ext, "RECEIVING", 100_000_001, "destination", sameDay), 400, "TRANSACTION_SIZE_LIMIT_EXCEEDED")
		e.qtQuote(t, qtBody(src, ext, "RECEIVING", 100_000_000, "destination", sameDay))
		pending := e.qtExternal(t, b, "1234560000")
		check("validation pending", qtBody(src, pending, "SENDING", 1000), 409, "BANK_ACCOUNT_VALIDATION_PENDING")
		failed := e.qtExternal(t, b, "1234569999")
		check("validation failed", qtBody(src, failed, "SENDING", 1000), 400, "INVALID_BANK_ACCOUNT")
	})
}

// Transfer-out, one rule per subtest (and R-IDEM-10, R-VER-04): it answers
// 200 with the OUTGOING transaction; refusals change nothing; a replay with
// the same key answers the same transaction and debits once.
func TestTransfers_Out(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the last subtest counts the day's volume
		a, b := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		ext := e.qtExternal(t, b, "1234561234")
		e.acFund(t, src, 100000)
		body := cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": ext}, "amount": 2500, "remittanceInformation": "Invoice 7"}
		refused := func(t *testing.T, body any, status int, code string, opts ...reqOpt) {
			t.Helper()
			before := e.qtCounts(t)
			expect(t, e.qdo("POST", "/transfer-out", body, opts...), status, code)
			if e.qtCounts(t) != before {
				t.Fatal("a refused transfer-out changed something")
			}
		}
		t.Run("R-QUOTE-46 200 with the OUTGOING transaction; R-IDEM-10 replay", func(t *testing.T) {
			r := e.qdo("POST", "/transfer-out", body, withHeader("Idempotency-Key", "to-1"))
			expect(t, r, http.StatusOK, "")
			x := r.JSON(t)
			if x["type"] != "OUTGOING" || x["quoteId"] == nil || qtAmount(t, x, "sentAmount") != 2500 {
				t.Fatalf("transfer-out: %v", x)
			}
			again := e.qdo("POST", "/transfer-out", body, withHeader("Idempotency-Key", "to-1"))
			expect(t, again, http.StatusOK, "")
			if again.JSON(t)["id"] != x["id"] {
				t.Fatal("replay answered another transaction")
			}
			if got := len(e.acTransactions(t, "type=OUTGOING")); got != 1 {
				t.Fatalf("%d outgoing transactions after a replay", got)
			}
		})
		t.Run("R-QUOTE-43 source.accountId and destination.accountId are required", func(t *testing.T) {
			refused(t, cobj{"amount": 1}, http.StatusBadRequest, "INVALID_INPUT")
			refused(t, cobj{"source": cobj{"accountId": src}, "amount": 1}, http.StatusBadRequest, "INVALID_INPUT")
			refused(t, cobj{"destination": cobj{"accountId": ext}, "amount": 1}, http.StatusBadRequest, "INVALID_INPUT")
		})
		t.Run("R-QUOTE-44 paymentRail must be supported; omitted it defaults", func(t *testing.T) {
			refused(t, cwith(body, "destination", cobj{"accountId": ext, "paymentRail": "UPI"}), http.StatusBadRequest, "INVALID_INPUT")
			r := e.qdo("POST", "/transfer-out", cwith(body, "amount", 1000))
			expect(t, r, http.StatusOK, "")
			if d, _ := r.JSON(t)["destination"].(map[string]any); d["paymentRail"] != "ACH" {
				t.Fatalf("default rail: %v", d)
			}
			r = e.qdo("POST", "/transfer-out", cwith(body, "amount", 5000, "destination", cobj{"accountId": ext, "paymentRail": "WIRE"}))
			expect(t, r, http.StatusOK, "")
			if d, _ := r.JSON(t)["destination"].(map[string]any); d["paymentRail"] != "WIRE" {
				t.Fatalf("chosen rail: %v", d)
			}
		})
		t.Run("R-QUOTE-45 remittanceInformation at most 80 characters; amount and purpose optional", func(t *testing.T) {
			refused(t, cwith(body, "remittanceInformation", strings.Repeat("r", 81)), http.StatusBadRequest, "INVALID_INPUT")
			expect(t, e.qdo("POST", "/transfer-out", cwith(body, "remittanceInformation", strings.Repeat("r", 80),
				"purposeOfPayment", "GOODS_OR_SERVICES")), http.StatusOK, "")
			// Without amount the whole available balance goes.
			left := e.qtBalance(t, a, "USD")
			noAmount := cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": ext}}
			r := e.qdo("POST", "/transfer-out", noAmount)
			expect(t, r, http.StatusOK, "")
			if qtAmount(t, r.JSON(t), "sentAmount") != left || e.qtBalance(t, a, "USD") != 0 {
				t.Fatalf("transfer-out without amount sent %d of %d", qtAmount(t, r.JSON(t), "sentAmount"), left)
			}
			e.acFund(t, src, 100000)
		})
		t.Run("R-QUOTE-47 404 unknown account, 400 bad input, 401 no auth, 429 daily volume", func(t *testing.T) {
			refused(t, cwith(body, "destination", cobj{"accountId": "ExternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
			refused(t, cwith(body, "amount", "ten"), http.StatusBadRequest, "INVALID_INPUT")
			refused(t, body, http.StatusUnauthorized, "UNAUTHORIZED", withCreds(""))
			if err := e.srv.quoteService().SetDailyVolumeLimit(context.Background(), e.acTenant(), 3000); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.srv.quoteService().SetDailyVolumeLimit(context.Background(), e.acTenant(), 0) })
			refused(t, body, http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
		})
		e.acAudit(t)
	})
}

// R-QUOTE-48: the POST /quotes equivalent of a transfer-out answers 200,
// PROCESSING, with a transactionId.
func TestQuotes_TransferOutMigration_R_QUOTE_48(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		ext := e.qtExternal(t, b, "1234561234")
		e.acFund(t, src, 100000)
		q := e.qtQuote(t, qtBody(src, ext, "SENDING", 2500, "immediatelyExecute", true, "remittanceInformation", "Invoice 7",
			"purposeOfPayment", "GOODS_OR_SERVICES", "destination", cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": "ACH"}))
		if q["status"] != "PROCESSING" || q["transactionId"] == nil {
			t.Fatalf("%v", q)
		}
	})
}

// R-QUOTE-49, R-QUOTE-50: transfer-in pulls from an external US account into an
// internal account (sandbox: settled at once) and answers 200 with the
// INCOMING transaction.
func TestTransfers_In_R_QUOTE_49_R_QUOTE_50(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t)
		dst := e.qtAccountID(t, a, "USD")
		ext := e.qtExternal(t, a, "1234561234")
		r := e.do("POST", "/transfer-in", cobj{"source": cobj{"accountId": ext}, "destination": cobj{"accountId": dst}, "amount": 5000})
		expect(t, r, http.StatusOK, "")
		x := r.JSON(t)
		if x["type"] != "INCOMING" || x["status"] != "COMPLETED" {
			t.Fatalf("transfer-in: %v", x)
		}
		if got := e.qtBalance(t, a, "USD"); got != 5000 {
			t.Fatalf("balance %d", got)
		}
		expect(t, e.do("POST", "/transfer-in", cobj{"source": cobj{"accountId": ext}, "destination": cobj{"accountId": dst}}), http.StatusBadRequest, "INVALID_INPUT")
		// The POST /quotes form (R-QUOTE-50).
		q := e.qtQuote(t, qtBody(ext, dst, "SENDING", 1000, "immediatelyExecute", true))
		if q["status"] != "PROCESSING" {
			t.Fatalf("%v", q)
		}
		e.acAudit(t)
	})
}
