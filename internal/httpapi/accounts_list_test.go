package httpapi

import (
	"net/http"
	"testing"
)

// R-IACCT-16, R-CONV-10..13: both lists filter by currency and type (the
// customers' list also by customer) and page with limit and cursor.
func TestAccounts_ListFiltersAndPages_R_IACCT_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD", "BTC")
		c1, c2 := e.acCustomer(t), e.acCustomer(t)
		rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": c1})

		all := e.acList(t, acCustomers, "limit=1")
		if len(all) != 5 {
			t.Fatalf("%d customer accounts, want 5", len(all))
		}
		seen := map[any]bool{}
		for _, a := range all {
			if seen[a["id"]] {
				t.Fatal("an account listed twice across pages")
			}
			seen[a["id"]] = true
		}
		if got := e.acList(t, acCustomers, "customerId="+c2); len(got) != 2 {
			t.Fatalf("c2 has %d accounts", len(got))
		}
		if got := e.acList(t, acCustomers, "type=RULE_BASED"); len(got) != 1 || got[0]["id"] != rb["id"] {
			t.Fatalf("rule-based filter %v", got)
		}
		if got := e.acList(t, acCustomers, "currency=BTC&type=INTERNAL_CRYPTO"); len(got) != 2 {
			t.Fatalf("BTC filter %d", len(got))
		}
		if got := e.acList(t, acCustomers, "customerId="+c1+"&currency=USD"); len(got) != 2 {
			t.Fatalf("c1 USD %d", len(got))
		}
		if got := e.acList(t, acPlatform, "currency=BTC"); len(got) != 1 || got[0]["type"] != "INTERNAL_CRYPTO" {
			t.Fatalf("platform BTC %v", got)
		}
		if got := e.acList(t, acCustomers, "customerId=Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"); len(got) != 0 {
			t.Fatal("an unknown customer has accounts")
		}

		// Page size: default 20, cursor bound to its filters.
		r := e.do("GET", acCustomers+"?limit=2", nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if len(m["data"].([]any)) != 2 || m["hasMore"] != true || m["totalCount"] != 5.0 {
			t.Fatalf("page %v", m)
		}
		expect(t, e.do("GET", acCustomers+"?currency=BTC&cursor="+m["nextCursor"].(string), nil), http.StatusBadRequest, "INVALID_INPUT")

		// Bad filters, all listed at once.
		r = e.do("GET", acCustomers+"?type=SAVINGS&currency=usd&limit=101", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["type"] != "enum" || fe["currency"] != "pattern" || fe["limit"] != "maximum" {
			t.Fatalf("field errors %v", fe)
		}
		r = e.do("GET", acPlatform+"?customerId="+c1, nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
	})
}

// Tenancy: each environment sees only its own accounts; a deleted
// customer's accounts leave the lists with it.
func TestAccounts_TenancyAndDeletedCustomers(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		pid := e.acCustomer(t, withCreds(e.production))
		if got := e.acList(t, acCustomers, ""); len(got) != 1 || got[0]["customerId"] != cid {
			t.Fatalf("sandbox list %v", got)
		}
		if got := e.acList(t, acCustomers, "", withCreds(e.production)); len(got) != 1 || got[0]["customerId"] != pid {
			t.Fatalf("production list %v", got)
		}
		sandboxPlatform := e.acList(t, acPlatform, "")
		prodPlatform := e.acList(t, acPlatform, "", withCreds(e.production))
		if len(sandboxPlatform) != 1 || len(prodPlatform) != 1 || sandboxPlatform[0]["id"] == prodPlatform[0]["id"] {
			t.Fatal("platform accounts shared between environments")
		}
		// A sandbox account cannot be funded with the other environment's
		// view of it, nor found from production.
		acct := e.acAccount(t, cid, "USD")["id"].(string)
		expect(t, e.do("POST", "/sandbox/internal-accounts/"+prodPlatform[0]["id"].(string)+"/fund", cobj{"amount": 1}),
			http.StatusNotFound, "ACCOUNT_NOT_FOUND")

		expect(t, e.do("DELETE", "/customers/"+cid, nil), http.StatusOK, "")
		if got := e.acList(t, acCustomers, ""); len(got) != 0 {
			t.Fatalf("a deleted customer's accounts are listed: %v", got)
		}
		expect(t, e.do("POST", "/sandbox/internal-accounts/"+acct+"/fund", cobj{"amount": 1}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
	})
}
