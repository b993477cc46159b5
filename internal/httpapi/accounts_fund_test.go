package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/id"
)

// R-SBX-01, R-TXN-06, R-TXN-13..15: a sandbox deposit credits the account
// and is one INCOMING transaction, COMPLETED with settledAt, announced by
// INCOMING_PAYMENT.COMPLETED; the ledger stays balanced.
func TestFund_DepositIsCompletedIncomingTransaction_R_SBX_01_R_TXN_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		acct := e.acAccount(t, cid, "USD")
		ref := acct["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["reference"]
		funded := e.acFund(t, acct["id"].(string), 12345)
		if funded["id"] != acct["id"] || acAmount(t, funded, "balance") != 12345 || acAmount(t, funded, "totalBalance") != 12345 {
			t.Fatalf("funded account %v", funded)
		}
		e.acFund(t, acct["id"].(string), 55)
		if got := e.acAccount(t, cid, "USD"); acAmount(t, got, "balance") != 12400 {
			t.Fatalf("balance after two deposits %v", got["balance"])
		}

		txs := e.acTransactions(t, "accountIdentifier="+acct["id"].(string)+"&sortOrder=asc")
		if len(txs) != 2 {
			t.Fatalf("%d transactions", len(txs))
		}
		x := txs[0]
		if !id.Valid(id.Transaction, x["id"].(string)) || x["type"] != "INCOMING" || x["status"] != "COMPLETED" ||
			x["direction"] != "CREDIT" || x["customerId"] != cid || x["settledAt"] == nil || x["fees"] != 0.0 ||
			acAmount(t, x, "sentAmount") != 12345 || acAmount(t, x, "receivedAmount") != 12345 {
			t.Fatalf("transaction %v", x)
		}
		if x["destination"].(map[string]any)["accountId"] != acct["id"] || x["source"].(map[string]any)["sourceType"] != "REALTIME_FUNDING" {
			t.Fatalf("sides %v → %v", x["source"], x["destination"])
		}
		if x["reconciliationInstructions"].(map[string]any)["reference"] != ref {
			t.Fatalf("reference %v, want the account's %v", x["reconciliationInstructions"], ref)
		}
		if _, ok := x["ruleBasedAccountId"]; ok {
			t.Fatal("ruleBasedAccountId on a plain deposit")
		}
		if _, ok := x["platformCustomerId"].(string); !ok {
			t.Fatal("no platformCustomerId")
		}
		got := e.do("GET", "/transactions/"+x["id"].(string), nil)
		expect(t, got, http.StatusOK, "")
		if got.JSON(t)["id"] != x["id"] {
			t.Fatal("GET by id")
		}
		evs := e.acEvents(t, x["id"].(string))
		if len(evs) != 1 || evs[0]["type"] != "INCOMING_PAYMENT.COMPLETED" || evs[0]["data"].(map[string]any)["status"] != "COMPLETED" {
			t.Fatalf("events %v", evs)
		}
		e.acAudit(t)

		// A chosen reference travels with the deposit; a crypto account is
		// funded in its smallest unit.
		r := e.do("POST", "/sandbox/internal-accounts/"+acct["id"].(string)+"/fund", cobj{"amount": 1, "currency": "USD", "reference": "INV-7"})
		expect(t, r, http.StatusOK, "")
		if got := e.acTransactions(t, "reference=INV-7"); len(got) != 1 {
			t.Fatalf("reference filter %v", got)
		}
		e.acSupport(t, "USD", "BTC")
		btc := e.acAccount(t, cid, "BTC")
		if f := e.acFund(t, btc["id"].(string), 150_000_000); acAmount(t, f, "balance") != 150_000_000 ||
			f["balance"].(map[string]any)["currency"].(map[string]any)["decimals"] != 8.0 {
			t.Fatalf("BTC account %v", f)
		}
		// The platform's own account too.
		plat := e.acAccount(t, "", "USD")
		e.acFund(t, plat["id"].(string), 700)
		pt := e.acTransactions(t, "accountIdentifier="+plat["id"].(string))
		if len(pt) != 1 {
			t.Fatalf("platform deposits %v", pt)
		}
		if _, ok := pt[0]["customerId"]; ok {
			t.Fatal("platform deposit with a customerId")
		}
		if got := e.acTransactions(t, "customerId="+e.platformID); len(got) != 1 || got[0]["id"] != pt[0]["id"] {
			t.Fatalf("the platform's id as customerId lists %v", got)
		}
		e.acAudit(t)
	})
}

// R-SBX-02, R-IACCT-07, R-TXN-37: funding a rule-based account sweeps the
// deposit to its destination in the same transaction; the sweep carries
// ruleBasedAccountId.
func TestFund_RuleBasedSweep_R_SBX_02_R_IACCT_07_R_TXN_37(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		usd := e.acAccount(t, cid, "USD")
		rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": cid})
		funded := e.acFund(t, rb["id"].(string), 5000)
		if funded["id"] != rb["id"] || acAmount(t, funded, "balance") != 0 {
			t.Fatalf("rule-based account after the sweep %v", funded)
		}
		if got := e.acAccount(t, cid, "USD"); acAmount(t, got, "balance") != 5000 {
			t.Fatalf("destination %v", got["balance"])
		}
		sweeps := e.acTransactions(t, "receiverAccountIdentifier="+usd["id"].(string))
		if len(sweeps) != 1 {
			t.Fatalf("%d transactions into the destination", len(sweeps))
		}
		s := sweeps[0]
		if s["ruleBasedAccountId"] != rb["id"] || s["type"] != "INCOMING" || s["status"] != "COMPLETED" ||
			s["source"].(map[string]any)["accountId"] != rb["id"] || acAmount(t, s, "receivedAmount") != 5000 || s["customerId"] != cid {
			t.Fatalf("sweep %v", s)
		}
		deposits := e.acTransactions(t, "receiverAccountIdentifier="+rb["id"].(string))
		if len(deposits) != 1 || deposits[0]["status"] != "COMPLETED" {
			t.Fatalf("deposits into the rule-based account %v", deposits)
		}
		if all := e.acTransactions(t, "accountIdentifier="+rb["id"].(string)); len(all) != 2 {
			t.Fatalf("%d transactions through the rule-based account", len(all))
		}
		if evs := e.acEvents(t, s["id"].(string)); len(evs) != 1 || evs[0]["type"] != "INCOMING_PAYMENT.COMPLETED" {
			t.Fatalf("sweep events %v", evs)
		}
		// The platform's rule-based account sweeps to the platform's.
		prb := e.acRuleBased(t, cobj{"type": "RULE_BASED"})
		e.acFund(t, prb["id"].(string), 9)
		if got := e.acAccount(t, "", "USD"); acAmount(t, got, "balance") != 9 {
			t.Fatalf("platform destination %v", got["balance"])
		}
		e.acAudit(t)
	})
}

// Sandbox only, TRANSACT only; bad bodies and unknown accounts are refused
// and change nothing.
func TestFund_RefusedRequestsChangeNothing(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		acct := e.acAccount(t, cid, "USD")["id"].(string)
		path := "/sandbox/internal-accounts/" + acct + "/fund"
		view := e.newToken(t, "VIEW")
		manage := e.newToken(t, "MANAGE")
		e.acList(t, acPlatform, "", withCreds(e.production)) // production's accounts exist
		before := e.acCounts(t)

		expect(t, e.do("POST", path, cobj{"amount": 100}, withCreds(e.production)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", path, cobj{"amount": 100}, withCreds(view)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", path, cobj{"amount": 100}, withCreds(manage)), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", path, cobj{"amount": 100}, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
		for _, tc := range []struct {
			body  string
			field string
			c     string
		}{
			{`{}`, "amount", "required"},
			{``, "amount", "required"},
			{`{"amount":0}`, "amount", "minimum"},
			{`{"amount":-5}`, "amount", "minimum"},
			{`{"amount":100000000001}`, "amount", "maximum"},
			{`{"amount":"100"}`, "amount", "type"},
			{`{"amount":1.5}`, "amount", "type"},
			{`{"amount":100,"currency":"EUR"}`, "currency", "enum"},
			{`{"amount":100,"currency":"usd"}`, "currency", "pattern"},
			{`{"amount":100,"reference":""}`, "reference", "minLength"},
			{`{"amount":100,"reference":"` + strings.Repeat("r", 141) + `"}`, "reference", "maxLength"},
			{`{"amount":100,"memo":"x"}`, "memo", "additionalProperties"},
		} {
			r := e.do("POST", path, tc.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fe := fieldErrors(t, r); fe[tc.field] != tc.c {
				t.Errorf("%s: field errors %v, want %s=%s", tc.body, fe, tc.field, tc.c)
			}
		}
		expect(t, e.do("POST", path, `{"amount":`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/sandbox/internal-accounts/InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b/fund", cobj{"amount": 1}),
			http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, e.do("POST", "/sandbox/internal-accounts/nope/fund", cobj{"amount": 1}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if e.acCounts(t) != before {
			t.Fatal("a refused request changed something")
		}
		if got := e.acAccount(t, cid, "USD"); acAmount(t, got, "balance") != 0 {
			t.Fatal("money arrived anyway")
		}
	})
}

// With an Idempotency-Key a retried deposit happens once.
func TestFund_IdempotentRetryFundsOnce_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		path := "/sandbox/internal-accounts/" + acct + "/fund"
		first := e.do("POST", path, cobj{"amount": 250}, key("dep-1"))
		expect(t, first, http.StatusOK, "")
		second := e.do("POST", path, cobj{"amount": 250}, key("dep-1"))
		expect(t, second, http.StatusOK, "")
		if string(second.Body) != string(first.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %s", second.Body)
		}
		if got := e.acTransactions(t, "accountIdentifier="+acct); len(got) != 1 {
			t.Fatalf("%d deposits", len(got))
		}
		expect(t, e.do("POST", path, cobj{"amount": 251}, key("dep-1")), http.StatusConflict, "CONFLICT")
	})
}

// A customer whose accounts hold money cannot be deleted; one with empty
// accounts can.
func TestFund_CustomerHoldingMoneyCannotBeDeleted(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		rich, poor := e.acCustomer(t), e.acCustomer(t)
		e.acFund(t, e.acAccount(t, rich, "USD")["id"].(string), 1)
		expect(t, e.do("DELETE", "/customers/"+rich, nil), http.StatusConflict, "CONFLICT")
		expect(t, e.do("GET", "/customers/"+rich, nil), http.StatusOK, "")
		// Money in a rule-based account counts too (here swept at once, so
		// the owner's USD account holds it).
		rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": poor})
		expect(t, e.do("DELETE", "/customers/"+poor, nil), http.StatusOK, "")
		expect(t, e.do("POST", "/sandbox/internal-accounts/"+rb["id"].(string)+"/fund", cobj{"amount": 1}), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
	})
}
