package httpapi

import (
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/id"
)

// R-IACCT-05, R-IACCT-06, R-IDEM-08: a rule-based account for a customer or
// the platform is 201 with funding instructions; a replay with the same key
// is 200 with the same account.
func TestRuleBased_Create201Replay200_R_IACCT_05_R_IACCT_06_R_IDEM_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		body := cobj{"type": "RULE_BASED", "customerId": cid, "currency": "USD"}
		first := e.do("POST", "/internal-accounts", body, key("rb-1"))
		expect(t, first, http.StatusCreated, "")
		a := first.JSON(t)
		if !id.Valid(id.InternalAccount, a["id"].(string)) || a["type"] != "RULE_BASED" || a["customerId"] != cid ||
			a["status"] != "ACTIVE" || acAmount(t, a, "balance") != 0 {
			t.Fatalf("account %v", a)
		}
		ins := a["fundingPaymentInstructions"].([]any)
		if len(ins) != 1 || ins[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["accountType"] != "USD_ACCOUNT" {
			t.Fatalf("instructions %v", ins)
		}
		usd := e.acAccount(t, cid, "USD")
		if a["routingRule"].(map[string]any)["destinationAccountId"] != usd["id"] {
			t.Fatalf("default destination %v, want the customer's USD account %v", a["routingRule"], usd["id"])
		}
		before := e.acCounts(t)
		replay := e.do("POST", "/internal-accounts", body, key("rb-1"))
		expect(t, replay, http.StatusOK, "")
		if string(replay.Body) != string(first.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %s, first %s", replay.Body, first.Body)
		}
		if e.acCounts(t) != before {
			t.Fatal("the replay created something")
		}
		// Without a key every request is its own account.
		e.acRuleBased(t, body)
		e.acRuleBased(t, body)
		if got := e.acList(t, acCustomers, "type=RULE_BASED"); len(got) != 3 {
			t.Fatalf("%d rule-based accounts", len(got))
		}

		// The platform's own, sweeping to the platform's USD account.
		p := e.acRuleBased(t, cobj{"type": "RULE_BASED"})
		if _, ok := p["customerId"]; ok {
			t.Fatal("platform rule-based account with a customerId")
		}
		if p["routingRule"].(map[string]any)["destinationAccountId"] != e.acAccount(t, "", "USD")["id"] {
			t.Fatalf("platform destination %v", p["routingRule"])
		}
		if p["fundingPaymentInstructions"].([]any)[0].(map[string]any)["isPlatformAccount"] != true {
			t.Fatal("platform rule-based account's instructions not the platform's")
		}
		if got := e.acList(t, acPlatform, "type=RULE_BASED"); len(got) != 1 {
			t.Fatalf("platform rule-based list %v", got)
		}
	})
}

// R-IDEM-09: the same key for a materially different account is 409 and
// creates nothing.
func TestRuleBased_ReusedKeyDifferentAccount_R_IDEM_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c1, c2 := e.acCustomer(t), e.acCustomer(t)
		expect(t, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": c1}, key("rb")), http.StatusCreated, "")
		before := e.acCounts(t)
		expect(t, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": c2}, key("rb")), http.StatusConflict, "CONFLICT")
		usd1 := e.acAccount(t, c1, "USD")["id"]
		expect(t, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": c1,
			"routingRule": cobj{"destinationAccountId": usd1}}, key("rb")), http.StatusConflict, "CONFLICT")
		if e.acCounts(t) != before {
			t.Fatal("a refused request created something")
		}
	})
}

// R-IACCT-03, R-IACCT-04: only RULE_BASED, only USD; refused requests list
// every bad field and create nothing.
func TestRuleBased_OnlyRuleBasedUSD_R_IACCT_03_R_IACCT_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		before := e.acCounts(t)
		for _, tc := range []struct {
			body   any
			fields map[string]string
		}{
			{cobj{"type": "INTERNAL_FIAT", "customerId": cid}, map[string]string{"type": "enum"}},
			{cobj{"type": "EMBEDDED_WALLET"}, map[string]string{"type": "enum"}},
			{cobj{"customerId": cid}, map[string]string{"type": "required"}},
			{cobj{"type": "RULE_BASED", "currency": "EUR"}, map[string]string{"currency": "enum"}},
			{cobj{"type": "RULE_BASED", "currency": "EUR", "customerId": "Jane", "routingRule": cobj{"destinationAccountId": "x"}},
				map[string]string{"currency": "enum", "customerId": "pattern", "routingRule.destinationAccountId": "pattern"}},
			{cobj{"type": "RULE_BASED", "nickname": "x"}, map[string]string{"nickname": "additionalProperties"}},
			{cobj{"type": "RULE_BASED", "currency": 840}, map[string]string{"currency": "type"}},
		} {
			r := e.do("POST", "/internal-accounts", tc.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			fe := fieldErrors(t, r)
			for f, c := range tc.fields {
				if fe[f] != c {
					t.Errorf("%v: field errors %v, want %s=%s", tc.body, fe, f, c)
				}
			}
		}
		if e.acCounts(t) != before {
			t.Fatal("a refused request created something")
		}
	})
}

// The destination must be an active USD account of the same owner, not
// rule-based; an unknown customer is 404; a VIEW token cannot create.
func TestRuleBased_BadDestinationOrOwner(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD", "EUR")
		c1, c2 := e.acCustomer(t), e.acCustomer(t)
		rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": c1})
		plat := e.acAccount(t, "", "USD")["id"]
		dests := map[string]any{
			"another customer's": e.acAccount(t, c2, "USD")["id"],
			"the platform's":     plat,
			"a rule-based one":   rb["id"],
			"a EUR one":          e.acAccount(t, c1, "EUR")["id"],
			"an unknown one":     "InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b",
			"production's twin":  e.acList(t, acPlatform, "currency=USD", withCreds(e.production))[0]["id"],
		}
		c1USD := e.acAccount(t, c1, "USD")["id"]
		before := e.acCounts(t)
		for name, dest := range dests {
			r := e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": c1, "routingRule": cobj{"destinationAccountId": dest}})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fe := fieldErrors(t, r); fe["routingRule.destinationAccountId"] == "" {
				t.Errorf("%s destination: field errors %v", name, fe)
			}
		}
		// The platform's rule-based account cannot sweep to a customer.
		r := e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "routingRule": cobj{"destinationAccountId": c1USD}})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": "Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"}),
			http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		view := e.newToken(t, "VIEW")
		expect(t, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED"}, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		if e.acCounts(t) != before {
			t.Fatal("a refused request created something")
		}
		// An explicit destination of the same owner is taken.
		usd := e.acAccount(t, c1, "USD")["id"]
		ok := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": c1, "routingRule": cobj{"destinationAccountId": usd}})
		if ok["routingRule"].(map[string]any)["destinationAccountId"] != usd {
			t.Fatal("explicit destination not kept")
		}
	})
}

// Without USD among the supported currencies the owner has no USD account to
// sweep to, so a destination is required.
func TestRuleBased_NoUSDAccountNeedsDestination(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "EUR")
		cid := e.acCustomer(t)
		r := e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": cid})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["routingRule.destinationAccountId"] != "required" {
			t.Fatalf("field errors %v", fe)
		}
	})
}
