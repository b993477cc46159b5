package httpapi

import (
	"net/http"
	"net/url"
	"testing"
)

// R-CONV-10: totalCount on GET /transactions is exact on every page, both for
// the scopes read from counters (all, customerId, the platform's own,
// platformCustomerId) and for filters that still count rows.
func TestTransactions_TotalCountExact_R_CONV_10(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c1, c2 := e.qtSetup(t)
		c3 := e.acCustomer(t)
		a1, a2 := e.qtAccountID(t, c1, "USD"), e.qtAccountID(t, c2, "USD")
		pa := e.acAccount(t, "", "USD")["id"].(string)
		for i := range 3 {
			e.acFund(t, a1, int64(100+i))
		}
		e.acFund(t, a2, 7)
		e.acFund(t, pa, 50)
		e.acFund(t, pa, 60)
		// An internal transfer records c1's OUTGOING and c2's INCOMING in
		// one database transaction.
		e.qtQuote(t, qtBody(a1, a2, "SENDING", 50, "immediatelyExecute", true))
		pcid := e.do("GET", "/customers/"+c2, nil).JSON(t)["platformCustomerId"].(string)

		for query, want := range map[string]int{
			"":                                    8,
			"sortOrder=asc":                       8,
			"customerId=" + c1:                    4,
			"sortOrder=desc&customerId=" + c2:     2,
			"customerId=" + c3:                    0,
			"customerId=" + e.platformID:          2,
			"platformCustomerId=" + pcid:          2,
			"platformCustomerId=nobody":           0,
			"type=INCOMING":                       7,
			"customerId=" + c1 + "&type=OUTGOING": 1,
			"status=COMPLETED&customerId=" + c1:   4,
			"accountIdentifier=" + a2:             3,
			"createdAfter=2000-01-01T00:00:00Z":   8,
		} {
			if n := e.txTotals(t, query); n != want {
				t.Errorf("%q: %d transactions, want %d", query, n, want)
			}
		}
		if n := e.txTotals(t, "", withCreds(e.production)); n != 0 {
			t.Fatalf("production: %d", n)
		}
	})
}

// txTotals pages through GET /transactions?query two at a time, checks
// that every page's totalCount equals the number listed in all, and returns
// it.
func (e *env) txTotals(t *testing.T, query string, opts ...reqOpt) int {
	t.Helper()
	var totals []int
	n, cursor := 0, ""
	for {
		q := query + "&limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.do("GET", "/transactions?"+q, nil, opts...)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		n += len(m["data"].([]any))
		totals = append(totals, int(m["totalCount"].(float64)))
		if m["hasMore"] != true {
			break
		}
		cursor = m["nextCursor"].(string)
	}
	for _, total := range totals {
		if total != n {
			t.Fatalf("%q: totalCount per page %v, %d listed", query, totals, n)
		}
	}
	return n
}
