package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// transactions.Transition on a stored transaction (the rails' entry point):
// a move outside the table is refused and changes nothing; a refund emits
// OUTGOING_PAYMENT.REFUND_<STATUS>; a status change moves the quote too
// (R-TXN-31, R-TXN-36, R-TXN-40, R-TXN-44).
func TestTransactions_Transition(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10000)
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 1000, "immediatelyExecute", true))
		txID := q["transactionId"].(string)
		ctx, tn := context.Background(), e.acTenant()
		err := e.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := transactions.Transition(ctx, tx, tn, txID, transactions.Change{Status: transactions.StatusExpired})
			return err
		})
		if !errors.Is(err, transactions.ErrRefusedTransition) {
			t.Fatalf("COMPLETED → EXPIRED: %v", err)
		}
		now := time.Now().UTC()
		err = e.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := transactions.Transition(ctx, tx, tn, txID, transactions.Change{Status: transactions.StatusFailed,
				FailureReason: "PAYOUT_RETURNED", Refund: &transactions.Refund{Reference: "R1", InitiatedAt: now, Status: transactions.RefundPending}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		x := e.do("GET", "/transactions/"+txID, nil)
		expect(t, x, http.StatusOK, "")
		m := x.JSON(t)
		if m["status"] != "FAILED" || m["failureReason"] != "PAYOUT_RETURNED" || m["refund"].(map[string]any)["status"] != "PENDING" {
			t.Fatalf("%v", m)
		}
		if g := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t); g["status"] != "FAILED" {
			t.Fatalf("quote follows its transaction: %v", g["status"])
		}
		var types []string
		for _, ev := range e.acEvents(t, txID) {
			types = append(types, ev["type"].(string))
		}
		n := len(types)
		if n < 2 || types[n-2] != "OUTGOING_PAYMENT.FAILED" || types[n-1] != "OUTGOING_PAYMENT.REFUND_PENDING" {
			t.Fatalf("events %v", types)
		}
	})
}

// R-IDEM-05, R-PDOC (quote side): documentIds need an Idempotency-Key and a
// CNY business bank payout; both refusals create nothing.
func TestQuotes_DocumentIDs_R_IDEM_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10000)
		before := e.qtCounts(t)
		body := qtBody(src, dst, "SENDING", 1000, "documentIds", []string{"PaymentDocument:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"})
		expect(t, e.do("POST", "/quotes", body), http.StatusBadRequest, "INVALID_INPUT")
		r := e.do("POST", "/quotes", body, withHeader("Idempotency-Key", "docs-1"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if _, ok := fieldErrors(t, r)["documentIds"]; !ok {
			t.Fatalf("%s", r.Body)
		}
		tooMany := qtBody(src, dst, "SENDING", 1000, "documentIds", []string{"a", "b", "c", "d"})
		expect(t, e.do("POST", "/quotes", tooMany, withHeader("Idempotency-Key", "docs-2")), http.StatusBadRequest, "INVALID_INPUT")
		if e.qtCounts(t) != before {
			t.Fatal("refusals created something")
		}
	})
}
