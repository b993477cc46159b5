package httpapi

import (
	"net/http"
	"testing"
	"time"
)

// R-TXN-01, R-TXN-02, R-TXN-04, R-CONV-10..13: transactions list with
// filters, both sort orders and pages; an unknown id is 404; status with
// type=CARD is 400; each environment sees only its own.
func TestTransactions_ListGetFilters_R_TXN_01_R_TXN_02_R_TXN_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		set := e.acClock(t, time.Date(2025, 10, 6, 12, 0, 0, 0, time.UTC))
		c1, c2 := e.acCustomer(t), e.acCustomer(t)
		a1, a2 := e.acAccount(t, c1, "USD")["id"].(string), e.acAccount(t, c2, "USD")["id"].(string)
		for i := range 3 {
			set(time.Date(2025, 10, 6, 12, i+1, 0, 0, time.UTC))
			e.acFund(t, a1, int64(100+i))
		}
		set(time.Date(2025, 10, 7, 12, 0, 0, 0, time.UTC))
		e.acFund(t, a2, 7)

		desc := e.acTransactions(t, "limit=1")
		if len(desc) != 4 {
			t.Fatalf("%d transactions", len(desc))
		}
		for i := 1; i < len(desc); i++ {
			if desc[i-1]["id"].(string) < desc[i]["id"].(string) {
				t.Fatal("default order is not newest first")
			}
		}
		asc := e.acTransactions(t, "sortOrder=asc&limit=3")
		if len(asc) != 4 || asc[0]["id"] != desc[3]["id"] || asc[3]["id"] != desc[0]["id"] {
			t.Fatal("asc is not the reverse of desc")
		}
		if got := e.acTransactions(t, "customerId="+c1); len(got) != 3 {
			t.Fatalf("customerId filter %d", len(got))
		}
		pcid := e.do("GET", "/customers/"+c2, nil).JSON(t)["platformCustomerId"].(string)
		if got := e.acTransactions(t, "platformCustomerId="+pcid); len(got) != 1 || got[0]["customerId"] != c2 || got[0]["platformCustomerId"] != pcid {
			t.Fatalf("platformCustomerId filter %v", got)
		}
		if got := e.acTransactions(t, "type=INCOMING&status=COMPLETED"); len(got) != 4 {
			t.Fatalf("type/status filter %d", len(got))
		}
		if got := e.acTransactions(t, "type=OUTGOING"); len(got) != 0 {
			t.Fatal("outgoing transactions out of nowhere")
		}
		if got := e.acTransactions(t, "status=FAILED"); len(got) != 0 {
			t.Fatal("failed transactions out of nowhere")
		}
		if got := e.acTransactions(t, "cardId=Card:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"); len(got) != 0 {
			t.Fatal("card transactions out of nowhere")
		}
		if got := e.acTransactions(t, "startDate=2025-10-06T12:02:00Z&endDate=2025-10-06T07:03:00-05:00"); len(got) != 2 {
			t.Fatalf("inclusive date window %d", len(got))
		}
		if got := e.acTransactions(t, "createdAfter=2025-10-07T00:00:00Z"); len(got) != 1 {
			t.Fatalf("createdAfter %d", len(got))
		}
		if got := e.acTransactions(t, "type=CARD"); len(got) != 0 {
			t.Fatal("card transactions out of nowhere")
		}

		r := e.do("GET", "/transactions?type=CARD&status=COMPLETED", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		r = e.do("GET", "/transactions?type=WIRE&status=DONE&sortOrder=up&startDate=yesterday", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["type"] != "enum" || fe["status"] != "enum" || fe["sortOrder"] != "enum" || fe["startDate"] != "format" {
			t.Fatalf("field errors %v", fe)
		}
		page := e.do("GET", "/transactions?limit=1", nil).JSON(t)
		expect(t, e.do("GET", "/transactions?sortOrder=asc&cursor="+page["nextCursor"].(string), nil), http.StatusBadRequest, "INVALID_INPUT")

		expect(t, e.do("GET", "/transactions/Transaction:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		expect(t, e.do("GET", "/transactions/"+desc[0]["id"].(string), nil, withCreds(e.production)), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		if got := e.acTransactions(t, "", withCreds(e.production)); len(got) != 0 {
			t.Fatal("production sees sandbox transactions")
		}
		view := e.newToken(t, "VIEW")
		if got := e.acTransactions(t, "", withCreds(view)); len(got) != 4 {
			t.Fatal("a VIEW token cannot read transactions")
		}
	})
}
