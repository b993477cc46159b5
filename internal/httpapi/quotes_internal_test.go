package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/pricing"
)

// R-QUOTE-01, R-QUOTE-11, R-QUOTE-22, R-QUOTE-23, R-QUOTE-27, R-QUOTE-35,
// R-VER-04, R-TXN-43: a same-currency
// internal transfer, SENDING locked: 200 PENDING with a transaction; execute
// with no body answers PROCESSING with the same transactionId; the money
// moves at once (COMPLETED, settledAt, OUTGOING_PAYMENT.PROCESSING then
// .COMPLETED, an INCOMING transaction for the receiver); the ledger audits.
func TestQuotes_SameCurrency_Execute(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 100000)
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 10000, "description", "rent", "remittanceInformation", "April"))
		if q["status"] != "PENDING" || q["transactionId"] == nil || q["exchangeRate"].(float64) != 1 {
			t.Fatalf("quote: %v", q)
		}
		want := e.qtPriced(t, "USD", "USD", pricing.RailInternal, pricing.Sending, 10000)
		if qnum(t, q, "totalSendingAmount") != 10000 || qnum(t, q, "totalReceivingAmount") != want.TotalReceivingAmount ||
			qnum(t, q, "feesIncluded") != want.FeesIncluded || q["lockedCurrencySide"] != "SENDING" || qnum(t, q, "lockedCurrencyAmount") != 10000 {
			t.Fatalf("amounts: %v, want %+v", q, want.Result)
		}
		if q["description"] != "rent" || q["source"].(map[string]any)["accountId"] != src {
			t.Fatalf("echo: %v", q)
		}
		qtIdentity(t, q)
		txID := q["transactionId"].(string)
		tx := e.do("GET", "/transactions/"+txID, nil)
		expect(t, tx, http.StatusOK, "")
		if m := tx.JSON(t); m["status"] != "PENDING" || m["type"] != "OUTGOING" || m["quoteId"] != q["id"] {
			t.Fatalf("transaction: %v", m)
		}
		if e.qtBalance(t, a, "USD") != 100000 {
			t.Fatal("a PENDING quote moves no money")
		}

		x := e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil)
		expect(t, x, http.StatusOK, "")
		xm := x.JSON(t)
		if xm["status"] != "PROCESSING" || xm["transactionId"] != txID {
			t.Fatalf("execute: %v", xm)
		}
		if got := e.qtBalance(t, a, "USD"); got != 90000 {
			t.Fatalf("source balance %d", got)
		}
		if got := e.qtBalance(t, b, "USD"); got != want.TotalReceivingAmount {
			t.Fatalf("destination balance %d", got)
		}
		g := e.do("GET", "/quotes/"+q["id"].(string), nil)
		expect(t, g, http.StatusOK, "")
		if m := g.JSON(t); m["status"] != "COMPLETED" || m["transactionId"] != txID {
			t.Fatalf("after: %v", m)
		}
		m := e.do("GET", "/transactions/"+txID, nil).JSON(t)
		if m["status"] != "COMPLETED" || m["settledAt"] == nil || m["platformFees"].(float64) != 0 {
			t.Fatalf("settled transaction: %v", m)
		}
		var types []string
		for _, ev := range e.acEvents(t, txID) {
			types = append(types, ev["type"].(string))
			// Each event's data is the transaction as that step left it,
			// though PROCESSING and COMPLETED are written at once.
			data, _ := ev["data"].(map[string]any)
			if _, status, _ := strings.Cut(ev["type"].(string), "."); data["status"] != status ||
				(status == "COMPLETED") != (data["settledAt"] != nil) {
				t.Fatalf("event %s carries %v", ev["type"], data)
			}
		}
		if len(types) != 3 || types[0] != "OUTGOING_PAYMENT.PENDING" || types[1] != "OUTGOING_PAYMENT.PROCESSING" || types[2] != "OUTGOING_PAYMENT.COMPLETED" {
			t.Fatalf("events %v", types)
		}
		incoming := e.acTransactions(t, "type=INCOMING&customerId="+b)
		if len(incoming) != 1 || incoming[0]["status"] != "COMPLETED" {
			t.Fatalf("receiver's incoming transaction: %v", incoming)
		}
		// Executing again is refused; nothing more moves.
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", "{}"), http.StatusConflict, "CONFLICT")
		if e.qtBalance(t, a, "USD") != 90000 {
			t.Fatal("second execute moved money")
		}
		e.acAudit(t)
	})
}

// R-QUOTE-01, R-QUOTE-11, R-QUOTE-12, R-QUOTE-22: cross-currency quotes on both locked sides carry
// exactly the engine's amounts, satisfy the rounding identity, and execute
// (immediatelyExecute) with the FX legs; the ledger audits.
func TestQuotes_CrossCurrency_BothSides(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t, "USD", "EUR")
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "EUR")
		e.acFund(t, src, 1000000)

		s := e.qtQuote(t, qtBody(src, dst, "SENDING", 10000))
		ws := e.qtPriced(t, "USD", "EUR", pricing.RailInternal, pricing.Sending, 10000)
		if qnum(t, s, "totalSendingAmount") != 10000 || qnum(t, s, "totalReceivingAmount") != ws.TotalReceivingAmount ||
			qnum(t, s, "feesIncluded") != ws.FeesIncluded || s["exchangeRate"].(float64) != 1.08 {
			t.Fatalf("SENDING: %v, want %+v", s, ws.Result)
		}
		qtIdentity(t, s)
		if rd, ok := s["rateDetails"].(map[string]any); !ok || rd["serviceApiVariableFeeRate"] == nil {
			t.Fatalf("rateDetails: %v", s["rateDetails"])
		}

		r := e.qtQuote(t, qtBody(src, dst, "RECEIVING", 9101, "immediatelyExecute", true))
		wr := e.qtPriced(t, "USD", "EUR", pricing.RailInternal, pricing.Receiving, 9101)
		if qnum(t, r, "totalReceivingAmount") != 9101 || qnum(t, r, "totalSendingAmount") != wr.TotalSendingAmount ||
			qnum(t, r, "feesIncluded") != wr.FeesIncluded {
			t.Fatalf("RECEIVING: %v, want %+v", r, wr.Result)
		}
		qtIdentity(t, r)
		if r["status"] != "PROCESSING" || r["transactionId"] == nil {
			t.Fatalf("immediatelyExecute: %v", r)
		}
		if got := e.qtBalance(t, a, "USD"); got != 1000000-wr.TotalSendingAmount {
			t.Fatalf("USD balance %d", got)
		}
		if got := e.qtBalance(t, b, "EUR"); got != 9101 {
			t.Fatalf("EUR balance %d", got)
		}
		tx := e.do("GET", "/transactions/"+r["transactionId"].(string), nil).JSON(t)
		if tx["status"] != "COMPLETED" || tx["exchangeRate"].(float64) != 1.08 || qtAmount(t, tx, "receivedAmount") != 9101 {
			t.Fatalf("transaction %v", tx)
		}
		e.acAudit(t)
	})
}
