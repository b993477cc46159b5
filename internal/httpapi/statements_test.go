package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// stPath is the balance-changes URL of an account over [start, end).
func stPath(accountID, start, end string, extra ...string) string {
	q := url.Values{"startDate": {start}, "endDate": {end}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return "/internal-accounts/" + accountID + "/balance-changes?" + q.Encode()
}

func stRFC(t time.Time) string { return t.Format(time.RFC3339Nano) }

// stRows reads one page's rows.
func stRows(t *testing.T, r resp) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, x := range r.JSON(t)["data"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// R-STMT-01, R-STMT-02, R-STMT-04, R-STMT-08 (no fees; with fees:
// statements_fees_test.go): a change at exactly startDate
// is in, one at exactly endDate is out; rows carry id, signed amount,
// effectiveAt and the transaction.
func TestStatements_HalfOpenWindow_R_STMT_01_R_STMT_02_R_STMT_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		t0 := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		set := e.acClock(t, t0.Add(-time.Hour))
		cid := e.acCustomer(t)
		acct := e.acAccount(t, cid, "USD")["id"].(string)
		set(t0)
		e.acFund(t, acct, 500)
		dep := e.acTransactions(t, "accountIdentifier="+acct)[0]
		set(t0.Add(48 * time.Hour))

		r := e.do("GET", stPath(acct, stRFC(t0.Add(-time.Hour)), stRFC(t0)), nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); len(stRows(t, r)) != 0 || m["openingBalance"] != 0.0 || m["closingBalance"] != 0.0 || m["hasMore"] != false {
			t.Fatalf("a change at endDate is in the window: %s", r.Body)
		}
		r = e.do("GET", stPath(acct, stRFC(t0), stRFC(t0.Add(time.Hour))), nil)
		expect(t, r, http.StatusOK, "")
		rows := stRows(t, r)
		if len(rows) != 1 {
			t.Fatalf("a change at startDate is not in the window: %s", r.Body)
		}
		row := rows[0]
		if row["amount"] != 500.0 || row["effectiveAt"] != "2025-10-06T12:00:00Z" || row["transactionId"] != dep["id"] || row["id"] == "" {
			t.Fatalf("row %v", row)
		}
		if m := r.JSON(t); m["openingBalance"] != 0.0 || m["closingBalance"] != 500.0 {
			t.Fatalf("balances %v", m)
		}
		// Below the microsecond: 100 ns after the change is after it.
		after := t0.Add(100 * time.Nanosecond)
		if rows := stRows(t, e.do("GET", stPath(acct, stRFC(after), stRFC(t0.Add(time.Hour))), nil)); len(rows) != 0 {
			t.Fatal("startDate just after the change includes it")
		}
		if rows := stRows(t, e.do("GET", stPath(acct, stRFC(t0.Add(-time.Hour)), stRFC(after)), nil)); len(rows) != 1 {
			t.Fatal("endDate just after the change excludes it")
		}
		// R-STMT-08: the transaction's fees are on the transaction, and the
		// row alone satisfies the invariant.
		x := e.do("GET", "/transactions/"+dep["id"].(string), nil).JSON(t)
		if x["fees"] != 0.0 {
			t.Fatalf("fees %v", x["fees"])
		}
	})
}

// R-STMT-03: the same instants written with different offsets give the
// same statement; a "+" that arrived unescaped is read as "+".
func TestStatements_AnyTimezone_R_STMT_03(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		t0 := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		set := e.acClock(t, t0.Add(-time.Hour))
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		for i := range 5 {
			set(t0.Add(time.Duration(i) * time.Hour))
			e.acFund(t, acct, int64(10+i))
		}
		set(t0.Add(72 * time.Hour))
		start, end := t0.Add(time.Hour), t0.Add(4*time.Hour)
		want := e.do("GET", stPath(acct, stRFC(start), stRFC(end)), nil)
		expect(t, want, http.StatusOK, "")
		if len(stRows(t, want)) != 3 {
			t.Fatalf("%s", want.Body)
		}
		chicago, _ := time.LoadLocation("America/Chicago")
		kolkata := time.FixedZone("IST", 5*3600+1800)
		for _, loc := range []*time.Location{chicago, kolkata, time.FixedZone("", -6*3600)} {
			got := e.do("GET", stPath(acct, stRFC(start.In(loc)), stRFC(end.In(loc))), nil)
			expect(t, got, http.StatusOK, "")
			if string(got.Body) != string(want.Body) {
				t.Fatalf("in %s: %s, want %s", loc, got.Body, want.Body)
			}
		}
		raw := "/internal-accounts/" + acct + "/balance-changes?startDate=" + stRFC(start.In(kolkata)) + "&endDate=" + stRFC(end.In(kolkata))
		got := e.do("GET", raw, nil)
		expect(t, got, http.StatusOK, "")
		if string(got.Body) != string(want.Body) {
			t.Fatalf("unescaped +: %s", got.Body)
		}
	})
}

// Done when: a statement over a US Central month with 1,000 balance changes
// pages at limit=7 with opening and closing identical on every page and
// opening + Σ amounts == closing (R-STMT-05, R-STMT-06, R-STMT-07). The
// changes are written straight through the ledger, in batches, under a
// controlled clock; holds inside the window never show.
func TestStatements_Month1000ChangesLimit7_R_STMT_05_R_STMT_06_R_STMT_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		chicago, _ := time.LoadLocation("America/Chicago")
		start := time.Date(2025, 10, 1, 0, 0, 0, 0, chicago) // 05:00Z
		end := time.Date(2025, 11, 1, 0, 0, 0, 0, chicago)
		set := e.acClock(t, start.Add(-10*24*time.Hour))
		cid := e.acCustomer(t)
		acct := e.acAccount(t, cid, "USD")["id"].(string)
		other := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		e.acFund(t, acct, 1_000_000) // before the window: in openingBalance
		l, tn := e.acService().Ledger, e.acTenant()
		world, err := l.SystemAccount(ctx, tn, ledger.CodeWorld, "USD")
		if err != nil {
			t.Fatal(err)
		}
		mv := func(from, to string, amount int64) ledger.TransferSpec {
			return ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: from, Currency: "USD", Amount: -amount}, {AccountID: to, Currency: "USD", Amount: amount}}}
		}
		apply := func(at time.Time, batch []ledger.TransferSpec) {
			t.Helper()
			set(at)
			if err := e.db.InTx(ctx, func(tx *store.Tx) error { _, err := l.Apply(ctx, tx, tn, batch); return err }); err != nil {
				t.Fatal(err)
			}
		}
		apply(start.Add(-time.Microsecond), []ledger.TransferSpec{mv(world.ID, acct, 77)}) // opening too
		var sum int64
		n := 0
		for b := range 20 {
			var batch []ledger.TransferSpec
			for range 50 {
				amount := int64(n%97 + 1)
				if n%3 == 2 {
					batch = append(batch, mv(acct, other, amount))
					sum -= amount
				} else {
					batch = append(batch, mv(world.ID, acct, amount))
					sum += amount
				}
				n++
			}
			// Batch 0 at exactly startDate; the others spread over the month.
			apply(start.Add(time.Duration(b)*36*time.Hour), batch)
		}
		hold := mv(acct, other, 5)
		hold.Kind = ledger.KindHold
		apply(start.Add(40*time.Hour), []ledger.TransferSpec{hold})
		apply(end, []ledger.TransferSpec{mv(world.ID, acct, 999)}) // at endDate: out
		set(end.Add(10 * 24 * time.Hour))

		first := e.do("GET", stPath(acct, stRFC(start), stRFC(end), "limit", "7"), nil)
		expect(t, first, http.StatusOK, "")
		opening, closing := first.JSON(t)["openingBalance"].(float64), first.JSON(t)["closingBalance"].(float64)
		if opening != 1_000_077 || closing != 1_000_077+float64(sum) {
			t.Fatalf("opening %v closing %v, want %d and %d", opening, closing, 1_000_077, 1_000_077+sum)
		}
		running, rows, pages := opening, 0, 0
		seen := map[string]bool{}
		var last time.Time
		page := first
		for {
			pages++
			m := page.JSON(t)
			if m["openingBalance"] != opening || m["closingBalance"] != closing {
				t.Fatalf("page %d: opening %v closing %v differ from the first page's", pages, m["openingBalance"], m["closingBalance"])
			}
			data := stRows(t, page)
			if len(data) > 7 || (m["hasMore"] == true && len(data) != 7) {
				t.Fatalf("page %d has %d rows", pages, len(data))
			}
			for _, row := range data {
				at, err := time.Parse(time.RFC3339Nano, row["effectiveAt"].(string))
				if err != nil || at.Before(last) || at.Before(start) || !at.Before(end) {
					t.Fatalf("row %v out of order or window", row)
				}
				last = at
				if seen[row["id"].(string)] {
					t.Fatalf("row %v twice", row)
				}
				seen[row["id"].(string)] = true
				running += row["amount"].(float64)
				rows++
			}
			if m["hasMore"] != true {
				if _, ok := m["nextCursor"]; ok {
					t.Fatal("nextCursor on the last page")
				}
				break
			}
			page = e.do("GET", stPath(acct, stRFC(start), stRFC(end), "limit", "7", "cursor", m["nextCursor"].(string)), nil)
			expect(t, page, http.StatusOK, "")
		}
		if rows != 1000 || pages != 143 || running != closing {
			t.Fatalf("%d rows on %d pages; opening + Σ = %v, closing %v", rows, pages, running, closing)
		}

		// An exact US Central month counts as that month's statement fetch.
		c := e.do("POST", "/internal-accounts/"+acct+"/confirm-statement", cobj{"statementMonth": "2025-10"})
		expect(t, c, http.StatusOK, "")
		if c.JSON(t)["fetchedAt"] != stRFC(end.Add(10*24*time.Hour).UTC()) {
			t.Fatalf("confirmation %s", c.Body)
		}
		e.acAudit(t)
	})
}

// R-STMT-09, R-ERR-17: a window whose card settlement has not closed is 409
// NOT_YET_AVAILABLE; the same request succeeds later.
func TestStatements_NotYetAvailable_R_STMT_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		today := time.Date(2025, 10, 6, 0, 0, 0, 0, time.UTC)
		set := e.acClock(t, today.Add(12*time.Hour))
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		e.acFund(t, acct, 42)
		path := stPath(acct, stRFC(today), stRFC(today.Add(24*time.Hour)))
		r := e.do("GET", path, nil)
		expect(t, r, http.StatusConflict, "NOT_YET_AVAILABLE")
		details, _ := r.JSON(t)["details"].(map[string]any)
		if details["availableAt"] != "2025-10-07T00:00:05Z" {
			t.Fatalf("details %v", details)
		}
		set(today.Add(24*time.Hour + 4*time.Second))
		expect(t, e.do("GET", path, nil), http.StatusConflict, "NOT_YET_AVAILABLE")
		set(today.Add(24*time.Hour + 5*time.Second))
		r = e.do("GET", path, nil)
		expect(t, r, http.StatusOK, "")
		if m := r.JSON(t); m["closingBalance"] != 42.0 {
			t.Fatalf("statement %v", m)
		}
	})
}

// R-STMT-09: an account without card activity does not wait for card
// settlement (a day in production): its window is available once a
// transaction stamped before its end can no longer be committing.
func TestStatements_ProductionSettlementDelay_R_STMT_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		now := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		e.acClock(t, now)
		cid := e.acCustomer(t, withCreds(e.production))
		acct := e.acList(t, acCustomers, "customerId="+cid, withCreds(e.production))[0]["id"].(string)
		expect(t, e.do("GET", stPath(acct, stRFC(now.Add(-48*time.Hour)), stRFC(now.Add(-2*time.Second))), nil, withCreds(e.production)),
			http.StatusConflict, "NOT_YET_AVAILABLE")
		expect(t, e.do("GET", stPath(acct, stRFC(now.Add(-48*time.Hour)), stRFC(now.Add(-time.Hour))), nil, withCreds(e.production)),
			http.StatusOK, "")
	})
}

// R-STMT-10, R-STMT-11, R-IACCT-17: only a customer's own USD account has a
// statement; rule-based, platform-owned and other-currency accounts are
// refused; unknown or other-environment accounts are 404.
func TestStatements_OnlyCustomerUSDAccounts_R_STMT_10_R_STMT_11_R_IACCT_17(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		now := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		e.acClock(t, now)
		e.acSupport(t, "USD", "EUR")
		cid := e.acCustomer(t)
		window := func(id string) string {
			return stPath(id, stRFC(now.Add(-48*time.Hour)), stRFC(now.Add(-24*time.Hour)))
		}
		expect(t, e.do("GET", window(e.acAccount(t, cid, "USD")["id"].(string)), nil), http.StatusOK, "")
		rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": cid})["id"].(string)
		for name, id := range map[string]string{
			"platform":   e.acAccount(t, "", "USD")["id"].(string),
			"rule-based": rb,
			"EUR":        e.acAccount(t, cid, "EUR")["id"].(string),
		} {
			r := e.do("GET", window(id), nil)
			if r.Status != http.StatusBadRequest || r.Code(t) != "INVALID_INPUT" {
				t.Errorf("%s account: %d %s", name, r.Status, r.Body)
			}
			r = e.do("POST", "/internal-accounts/"+id+"/confirm-statement", cobj{"statementMonth": "2025-09"})
			if r.Status != http.StatusBadRequest {
				t.Errorf("%s account confirm: %d %s", name, r.Status, r.Body)
			}
		}
		expect(t, e.do("GET", window("InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"), nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, e.do("GET", window(e.acAccount(t, cid, "USD")["id"].(string)), nil, withCreds(e.production)), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		view := e.newToken(t, "VIEW")
		expect(t, e.do("GET", window(e.acAccount(t, cid, "USD")["id"].(string)), nil, withCreds(view)), http.StatusOK, "")
	})
}

// R-STMT-12: money received through a rule-based account appears on the
// owner's statement, linked to the sweep transaction.
func TestStatements_RuleBasedReceiptsOnOwnersStatement_R_STMT_12(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		t0 := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		set := e.acClock(t, t0)
		cid := e.acCustomer(t)
		usd := e.acAccount(t, cid, "USD")["id"].(string)
		rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": cid})["id"].(string)
		e.acFund(t, rb, 321)
		sweep := e.acTransactions(t, "receiverAccountIdentifier="+usd)[0]
		set(t0.Add(48 * time.Hour))
		r := e.do("GET", stPath(usd, stRFC(t0), stRFC(t0.Add(time.Hour))), nil)
		expect(t, r, http.StatusOK, "")
		rows := stRows(t, r)
		if len(rows) != 1 || rows[0]["amount"] != 321.0 || rows[0]["transactionId"] != sweep["id"] {
			t.Fatalf("owner's statement %s", r.Body)
		}
		if sweep["ruleBasedAccountId"] != rb {
			t.Fatal("sweep without ruleBasedAccountId")
		}
	})
}

// Bad windows and cursors are 400 and list every bad parameter.
func TestStatements_BadWindowsAndCursors(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		now := time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC)
		set := e.acClock(t, now)
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		base := "/internal-accounts/" + acct + "/balance-changes"
		r := e.do("GET", base, nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["startDate"] != "required" || fe["endDate"] != "required" {
			t.Fatalf("field errors %v", fe)
		}
		r = e.do("GET", base+"?startDate=2025-10-01&endDate=yesterday&limit=0", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["startDate"] != "format" || fe["endDate"] != "format" || fe["limit"] != "minimum" {
			t.Fatalf("field errors %v", fe)
		}
		for _, w := range [][2]time.Time{{now.Add(-24 * time.Hour), now.Add(-24 * time.Hour)}, {now.Add(-24 * time.Hour), now.Add(-48 * time.Hour)}} {
			r = e.do("GET", stPath(acct, stRFC(w[0]), stRFC(w[1])), nil)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		}
		expect(t, e.do("GET", stPath(acct, stRFC(now.Add(-48*time.Hour)), stRFC(now.Add(-24*time.Hour)), "cursor", "forged"), nil),
			http.StatusBadRequest, "INVALID_INPUT")

		// A cursor continues only its own account and window.
		for i := range 3 {
			set(now.Add(-30*time.Hour + time.Duration(i)*time.Minute))
			e.acFund(t, acct, 1)
		}
		set(now)
		start, end := now.Add(-48*time.Hour), now.Add(-24*time.Hour)
		page := e.do("GET", stPath(acct, stRFC(start), stRFC(end), "limit", "1"), nil).JSON(t)
		cursor := page["nextCursor"].(string)
		expect(t, e.do("GET", stPath(acct, stRFC(start.Add(time.Second)), stRFC(end), "limit", "1", "cursor", cursor), nil),
			http.StatusBadRequest, "INVALID_INPUT")
		// The same instants in another offset keep the cursor valid.
		expect(t, e.do("GET", stPath(acct, stRFC(start.In(time.FixedZone("", -6*3600))), stRFC(end), "limit", "1", "cursor", cursor), nil),
			http.StatusOK, "")
	})
}
