package httpapi

import (
	"net/http"
	"testing"
	"time"
)

// R-STMT-08: on a statement of an account that paid fees, each row's amount
// already includes them: the rows alone satisfy openingBalance + Σ amount ==
// closingBalance with no fee adjustment, the debit row of a payment is its
// totalSendingAmount (fees inside), and the fees themselves are read from
// GET /transactions/{transactionId}, once per transaction, equal to what the
// quotes charged.
func TestStatements_RowAmountsIncludeFees_R_STMT_08(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		t0 := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		set := e.acClock(t, t0.Add(-time.Hour))
		a, b := e.qtSetup(t, "USD", "EUR")
		src, dst, eur := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD"), e.qtAccountID(t, b, "EUR")
		expect(t, e.qdo("PATCH", "/config", cobj{"feeConfigs": []any{cobj{"feeType": "CROSS_CURRENCY_TRANSACTION",
			"sourceCurrency": "USD", "variableFeeBps": 30, "fixedFee": cobj{"amount": 50, "currency": "USD"}}}}), http.StatusOK, "")
		set(t0)
		e.acFund(t, src, 100000)
		set(t0.Add(time.Minute))
		same := e.qtQuote(t, qtBody(src, dst, "SENDING", 10000, "immediatelyExecute", true,
			"platformFeeOverride", cobj{"platformFixedFee": cobj{"amount": 75, "currency": "USD"}, "platformVariableFeeBps": 0}))
		set(t0.Add(2 * time.Minute))
		cross := e.qtQuote(t, qtBody(src, eur, "SENDING", 20000, "immediatelyExecute", true))
		fees := map[string]int64{}
		for _, q := range []map[string]any{same, cross} {
			if qnum(t, q, "feesIncluded") <= 0 {
				t.Fatalf("the test needs quotes with fees: %v", q)
			}
			fees[q["transactionId"].(string)] = qnum(t, q, "feesIncluded")
		}
		set(t0.Add(48 * time.Hour))

		r := e.qdo("GET", stPath(src, stRFC(t0.Add(-time.Hour)), stRFC(t0.Add(time.Hour))), nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		rows := stRows(t, r)
		opening, closing := int64(m["openingBalance"].(float64)), int64(m["closingBalance"].(float64))
		var sum int64
		seen := map[string]bool{}
		var feeTotal int64
		for _, row := range rows {
			amount := int64(row["amount"].(float64))
			sum += amount
			txID, _ := row["transactionId"].(string)
			if f, ok := fees[txID]; ok {
				var q map[string]any
				for _, x := range []map[string]any{same, cross} {
					if x["transactionId"] == txID {
						q = x
					}
				}
				if amount != -qnum(t, q, "totalSendingAmount") {
					t.Fatalf("row %v: amount %d, want -totalSendingAmount %d (fees %d inside)", row, amount, -qnum(t, q, "totalSendingAmount"), f)
				}
			}
			if txID == "" || seen[txID] {
				continue
			}
			seen[txID] = true
			x := e.qdo("GET", "/transactions/"+txID, nil)
			expect(t, x, http.StatusOK, "")
			if f, ok := x.JSON(t)["fees"].(float64); ok {
				feeTotal += int64(f)
			}
		}
		if len(rows) != 3 || opening != 0 || opening+sum != closing {
			t.Fatalf("opening %d + Σ rows %d != closing %d (%d rows)", opening, sum, closing, len(rows))
		}
		if want := 100000 - qnum(t, same, "totalSendingAmount") - qnum(t, cross, "totalSendingAmount"); closing != want || e.qtBalance(t, a, "USD") != want {
			t.Fatalf("closing %d, want %d", closing, want)
		}
		if want := fees[same["transactionId"].(string)] + fees[cross["transactionId"].(string)]; feeTotal != want {
			t.Fatalf("fees from the transactions %d, want %d", feeTotal, want)
		}
		e.acAudit(t)
	})
}
