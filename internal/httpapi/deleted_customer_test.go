package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
)

// Issue 25, defect 1: a deleted customer's accounts are closed in the
// delete's transaction; credits to them are refused, and what must still
// arrive for the gone customer goes to the platform's suspense account,
// which the platform sees and resolves through the API.

// dcSuspense returns the platform's suspense account in cur, nil if there is
// none yet (GET /platform/internal-accounts).
func (e *env) dcSuspense(t *testing.T, cur string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, a := range e.acList(t, acPlatform, "currency="+cur) {
		if a["suspense"] == true {
			if found != nil {
				t.Fatalf("two suspense accounts in %s", cur)
			}
			found = a
		}
	}
	if found != nil && (len(found["fundingPaymentInstructions"].([]any)) != 0 || found["customerId"] != nil) {
		t.Fatalf("suspense account %v has funding instructions or an owner", found)
	}
	return found
}

// dcLedgerBalance reads a ledger account's posted balance and pending amounts
// straight from the ledger (a closed account is not visible in the API).
func (e *env) dcLedgerBalance(t *testing.T, accountID string) ledger.Balance {
	t.Helper()
	b, err := ledger.New(e.db).Balance(context.Background(), e.acTenant(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dcDelete deletes a customer and expects 200.
func (e *env) dcDelete(t *testing.T, customerID string) {
	t.Helper()
	expect(t, e.do("DELETE", "/customers/"+customerID, nil), http.StatusOK, "")
}

// A quote created while its receiver was live, executed after the receiver
// was deleted: 404 ACCOUNT_NOT_FOUND (the account is gone, as for a quote
// created after the delete), nothing moves, the quote stays PENDING.
func TestDeletedCustomer_QuoteExecuteToDeletedReceiver(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10_000)
		q := e.qtQuote(t, qtBody(src, dst, "SENDING", 2_500))
		e.dcDelete(t, b)
		// R-ERR-12: ACCOUNT_NOT_FOUND is a 404.
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if got := e.qtBalance(t, a, "USD"); got != 10_000 {
			t.Fatalf("sender balance %d after the refused execution", got)
		}
		if b := e.dcLedgerBalance(t, dst); b.Posted != 0 || b.Pending != 0 {
			t.Fatalf("the deleted receiver's ledger account holds %+v", b)
		}
		if got := e.do("GET", "/quotes/"+q["id"].(string), nil).JSON(t)["status"]; got != "PENDING" {
			t.Fatalf("quote %v after the refused execution", got)
		}
		e.acAudit(t)
	})
}

// A payout (POST /transfer-out, the sender's whole balance) settles, the
// sender is deleted, then the ACH payout is returned: the refund goes to
// the platform's USD suspense account, with an INCOMING transaction of the
// platform saying why; the platform moves it out with an ordinary quote.
func TestDeletedCustomer_PayoutReturnAfterSenderDeletedGoesToSuspense(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 40_000)
		ext := e.qtExternal(t, a, "1234561234")
		r := e.do("POST", "/transfer-out", cobj{"source": cobj{"accountId": src},
			"destination": cobj{"accountId": ext, "paymentRail": "ACH"}})
		expect(t, r, http.StatusOK, "")
		txn := r.JSON(t)["id"].(string)
		e.railsDrain(t)
		if got := e.qtBalance(t, a, "USD"); got != 0 {
			t.Fatalf("sender balance %d after paying everything", got)
		}
		e.dcDelete(t, a)
		if e.dcSuspense(t, "USD") != nil {
			t.Fatal("a suspense account before anything went to suspense")
		}

		r = e.do("POST", "/sandbox/transactions/"+txn+"/return", nil)
		expect(t, r, http.StatusOK, "")
		// R-TXN-33: the returned payout is FAILED, PAYOUT_RETURNED, refunded
		// (here into suspense: its sender is gone).
		if x := r.JSON(t); x["status"] != "FAILED" || x["failureReason"] != "PAYOUT_RETURNED" || x["refund"] == nil {
			t.Fatalf("returned payout %v", x)
		}
		if b := e.dcLedgerBalance(t, src); b.Posted != 0 {
			t.Fatalf("the refund went into the deleted sender's account: %+v", b)
		}
		s := e.dcSuspense(t, "USD")
		// R-IACCT-01: the suspense account's type is one of the four.
		if s == nil || acAmount(t, s, "balance") != 40_000 || s["type"] != "INTERNAL_FIAT" {
			t.Fatalf("suspense account %v, want the 40000 refund", s)
		}
		sid := s["id"].(string)
		var found bool
		for _, x := range e.acTransactions(t, "accountIdentifier="+sid) {
			xs, _ := x["source"].(map[string]any)
			rec, _ := x["reconciliationInstructions"].(map[string]any)
			found = found || (x["type"] == "INCOMING" && qtAmount(t, x, "receivedAmount") == 40_000 &&
				strings.HasPrefix(x["description"].(string), "Suspense:") && xs["accountId"] == src && rec["reference"] == txn)
		}
		if !found {
			t.Fatalf("no suspense transaction for %s: %v", sid, e.acTransactions(t, "accountIdentifier="+sid))
		}

		// Resolved with the ordinary routes: a quote out of suspense.
		dst := e.qtAccountID(t, b, "USD")
		q := e.qtQuote(t, qtBody(sid, dst, "SENDING", 40_000, "immediatelyExecute", true))
		if q["status"] != "PROCESSING" && q["status"] != "COMPLETED" {
			t.Fatalf("resolving quote %v", q)
		}
		if got := acAmount(t, e.dcSuspense(t, "USD"), "balance"); got != 0 {
			t.Fatalf("suspense holds %d after the platform moved it out", got)
		}
		if got := e.qtBalance(t, b, "USD"); got <= 0 {
			t.Fatalf("the resolved money did not arrive: %d", got)
		}
		// Nothing else credits suspense.
		expect(t, e.do("POST", "/sandbox/internal-accounts/"+sid+"/fund", cobj{"amount": 1}), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": sid, "amount": 1}), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", "/quotes", qtBody(dst, sid, "SENDING", 1)), http.StatusBadRequest, "INVALID_INPUT")
		e.acAudit(t)
	})
}

// An incoming ACH deposit is returned, its customer deleted, then the
// return is dishonored: the money comes back into suspense, not into the
// closed account.
func TestDeletedCustomer_DishonorAfterDeleteGoesToSuspense(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		c := e.acCustomer(t)
		acct := e.acAccount(t, c, "USD")["id"].(string)
		r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 12_500})
		expect(t, r, http.StatusOK, "")
		id := r.JSON(t)["id"].(string)
		expect(t, e.do("POST", "/sandbox/transactions/"+id+"/return", nil), http.StatusOK, "")
		e.dcDelete(t, c)
		r = e.do("POST", "/sandbox/transactions/"+id+"/dishonor", nil)
		expect(t, r, http.StatusOK, "")
		// R-TXN-35: the dishonored return is COMPLETED again.
		if x := r.JSON(t); x["status"] != "COMPLETED" || railDetailsOf(t, x, "source")["status"] != "RETURN_DISHONORED" {
			t.Fatalf("dishonored %v", x)
		}
		if b := e.dcLedgerBalance(t, acct); b.Posted != 0 {
			t.Fatalf("the dishonored return went into the closed account: %+v", b)
		}
		if s := e.dcSuspense(t, "USD"); s == nil || acAmount(t, s, "balance") != 12_500 {
			t.Fatalf("suspense %v, want 12500", s)
		}
		e.acAudit(t)
	})
}

// An incoming payment waiting for platform approval; its customer is
// deleted; the platform approves it: the payment has arrived, and goes to
// suspense.
func TestDeletedCustomer_ApproveAfterDeleteGoesToSuspense(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		c := e.acCustomer(t)
		acct := e.acAccount(t, c, "USD")["id"].(string)
		r := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 3_907, "paymentRail": "WIRE"})
		expect(t, r, http.StatusOK, "")
		id := r.JSON(t)["id"].(string)
		e.dcDelete(t, c)
		r = e.do("POST", "/transactions/"+id+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if b := e.dcLedgerBalance(t, acct); b.Posted != 0 {
			t.Fatalf("the approved payment went into the closed account: %+v", b)
		}
		if s := e.dcSuspense(t, "USD"); s == nil || acAmount(t, s, "balance") != 3_907 {
			t.Fatalf("suspense %v, want 3907", s)
		}
		e.acAudit(t)
	})
}

// A customer whose money is only reserved (a payout in flight: a pending
// debit) cannot be deleted either.
func TestDeletedCustomer_PendingMoneyBlocksDelete(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 5_000)
		ext := e.qtExternal(t, a, "1234561234")
		expect(t, e.do("POST", "/transfer-out", cobj{"source": cobj{"accountId": src},
			"destination": cobj{"accountId": ext, "paymentRail": "ACH"}}), http.StatusOK, "")
		if got := e.qtBalance(t, a, "USD"); got != 0 {
			t.Fatalf("available %d with the payout in flight", got)
		}
		expect(t, e.do("DELETE", "/customers/"+a, nil), http.StatusConflict, "CONFLICT")
		expect(t, e.do("GET", "/customers/"+a, nil), http.StatusOK, "")
	})
}

// dcCredit is one way to credit a customer's USD account, raced against
// its deletion; it answers the HTTP status.
type dcCredit struct {
	name string
	// prepare runs before the race (fund a sender, create a quote ...) and
	// returns the request to race.
	prepare func(t *testing.T, e *env, c, acct string) func() int
}

func dcCredits(sender func(t *testing.T, e *env) string) []dcCredit {
	return []dcCredit{
		{"sandbox deposit", func(t *testing.T, e *env, c, acct string) func() int {
			return func() int {
				return e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 700}).Status
			}
		}},
		{"sandbox fund", func(t *testing.T, e *env, c, acct string) func() int {
			return func() int {
				return e.do("POST", "/sandbox/internal-accounts/"+acct+"/fund", cobj{"amount": 700}).Status
			}
		}},
		{"rule-based fund", func(t *testing.T, e *env, c, acct string) func() int {
			rb := e.acRuleBased(t, cobj{"type": "RULE_BASED", "customerId": c})["id"].(string)
			return func() int {
				return e.do("POST", "/sandbox/internal-accounts/"+rb+"/fund", cobj{"amount": 700}).Status
			}
		}},
		{"transfer-in", func(t *testing.T, e *env, c, acct string) func() int {
			ext := e.qtExternal(t, c, "1234561234")
			return func() int {
				return e.do("POST", "/transfer-in", cobj{"source": cobj{"accountId": ext},
					"destination": cobj{"accountId": acct}, "amount": 700}).Status
			}
		}},
		{"quote execute", func(t *testing.T, e *env, c, acct string) func() int {
			q := e.qtQuote(t, qtBody(sender(t, e), acct, "SENDING", 700))
			return func() int { return e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil).Status }
		}},
	}
}

// A delete racing each credit path (12 trials each, 60 per engine): either
// the credit lands first and the delete is refused (409, the money visible
// on the live customer), or the delete wins and the credit is refused (404);
// never both succeed, and a deleted customer's ledger accounts hold nothing.
func TestDeletedCustomer_ConcurrentDeleteVersusCredit(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		e.qtWebhook(t)
		var senderAcct string
		sender := func(t *testing.T, e *env) string {
			if senderAcct == "" {
				senderAcct = e.qtAccountID(t, e.qtCustomer(t), "USD")
				e.acFund(t, senderAcct, 1_000_000)
			}
			return senderAcct
		}
		for _, cr := range dcCredits(sender) {
			t.Run(strings.ReplaceAll(cr.name, " ", "_"), func(t *testing.T) {
				outcomes := map[string]int{}
				for i := range 12 {
					outcomes[e.dcRace(t, i, cr)]++
				}
				t.Logf("outcomes: %v", outcomes)
			})
		}
		e.acAudit(t)
	})
}

// dcRace runs one trial of a credit racing a delete and checks it.
func (e *env) dcRace(t *testing.T, i int, cr dcCredit) string {
	t.Helper()
	c := e.qtCustomer(t)
	acct := e.qtAccountID(t, c, "USD")
	credit := cr.prepare(t, e, c, acct)
	var wg sync.WaitGroup
	var creditStatus, deleteStatus int
	wg.Add(2)
	go func() { defer wg.Done(); creditStatus = credit() }()
	go func() { defer wg.Done(); deleteStatus = e.do("DELETE", "/customers/"+c, nil).Status }()
	wg.Wait()
	key := fmt.Sprintf("credit %d delete %d", creditStatus, deleteStatus)
	switch {
	case creditStatus == http.StatusOK && deleteStatus == http.StatusConflict:
		if got := e.qtBalance(t, c, "USD"); got <= 0 {
			t.Fatalf("trial %d: credited and delete refused, but the live customer shows %d", i, got)
		}
	case creditStatus == http.StatusNotFound && deleteStatus == http.StatusOK:
	default:
		t.Fatalf("trial %d: %s", i, key)
	}
	if deleteStatus == http.StatusOK {
		if b := e.dcLedgerBalance(t, acct); b.Posted != 0 || b.Pending != 0 {
			t.Fatalf("trial %d: the deleted customer's account holds %+v", i, b)
		}
	}
	return key
}
