package httpapi

import (
	"net/http"
	"testing"
	"time"
)

// R-STMT-14, R-STMT-16: confirming a month answers 2xx; confirming again
// keeps the first receipt time.
func TestConfirmStatement_IdempotentFirstTimeKept_R_STMT_14_R_STMT_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		t1 := time.Date(2025, 11, 3, 15, 4, 5, 123456000, time.UTC)
		set := e.acClock(t, t1)
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		path := "/internal-accounts/" + acct + "/confirm-statement"
		r := e.do("POST", path, cobj{"statementMonth": "2025-10"})
		expect(t, r, http.StatusOK, "")
		first := r.JSON(t)
		if first["accountId"] != acct || first["statementMonth"] != "2025-10" || first["confirmedAt"] != "2025-11-03T15:04:05.123456Z" {
			t.Fatalf("confirmation %v", first)
		}
		if _, ok := first["fetchedAt"]; ok {
			t.Fatal("fetchedAt without a fetch")
		}
		set(t1.Add(26 * time.Hour))
		r = e.do("POST", path, cobj{"statementMonth": "2025-10"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["confirmedAt"] != first["confirmedAt"] {
			t.Fatalf("second confirmation %s changed the receipt time", r.Body)
		}
		// Another month is its own receipt, and the current month (begun)
		// may be confirmed.
		if r := e.do("POST", path, cobj{"statementMonth": "2025-11"}); r.Status != http.StatusOK || r.JSON(t)["confirmedAt"] == first["confirmedAt"] {
			t.Fatalf("current month: %d %s", r.Status, r.Body)
		}
		view := e.newToken(t, "VIEW")
		expect(t, e.do("POST", path, cobj{"statementMonth": "2025-10"}, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", "/internal-accounts/InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b/confirm-statement",
			cobj{"statementMonth": "2025-10"}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
	})
}

// R-STMT-15: statementMonth is YYYY-MM naming a US Central month that has
// begun: at 04:59:59Z on 1 November 2025 it is still October in Chicago
// (CDT, UTC-5), at 05:00:00Z November has begun. Refusals record nothing.
func TestConfirmStatement_MonthMustHaveBegunInUSCentral_R_STMT_15(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		boundary := time.Date(2025, 11, 1, 5, 0, 0, 0, time.UTC)
		set := e.acClock(t, boundary.Add(-time.Second))
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		path := "/internal-accounts/" + acct + "/confirm-statement"
		for body, c := range map[string]string{
			`{"statementMonth":"2025-11"}`: "maximum",
			`{"statementMonth":"2026-01"}`: "maximum",
			`{"statementMonth":"2025-13"}`: "pattern",
			`{"statementMonth":"2025/10"}`: "pattern",
			`{"statementMonth":"2025-1"}`:  "pattern",
			`{"statementMonth":""}`:        "pattern",
			`{"statementMonth":202510}`:    "type",
			`{}`:                           "required",
		} {
			r := e.do("POST", path, body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fe := fieldErrors(t, r); fe["statementMonth"] != c {
				t.Errorf("%s: field errors %v, want %s", body, fe, c)
			}
		}
		expect(t, e.do("POST", path, `{"statementMonth":"2025-10","note":"x"}`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", path, `{"statementMonth":"2025-10"}`), http.StatusOK, "")
		set(boundary)
		r := e.do("POST", path, `{"statementMonth":"2025-11"}`)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["confirmedAt"] != "2025-11-01T05:00:00Z" {
			t.Fatalf("confirmation %s", r.Body)
		}
		// The first month refused earlier was not recorded: its receipt
		// time is the accepted call's.
	})
}
