package httpapi

import (
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

// R-AUTH-13: a quote from an EMBEDDED_WALLET carries a payloadToSign in its
// paymentInstructions; executing it without a stamp, with a malformed one,
// with a stranger's key or with another wallet's session moves nothing;
// with a stamp of the wallet's session it executes, once.
func TestWallets_QuoteExecution_R_AUTH_13(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		owner := e.wlOwner(t, c)
		e.qtWebhook(t)
		e.acFund(t, c.accountID, 5_000_000)
		usd := e.acAccount(t, owner, "USD")["id"].(string)
		// Immediate execution cannot carry the customer's signature.
		r := e.do("POST", "/quotes", qtBody(c.accountID, usd, "SENDING", 1_000_000, "immediatelyExecute", true))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		q := e.qtQuote(t, qtBody(c.accountID, usd, "SENDING", 1_000_000))
		instr := q["paymentInstructions"].([]any)
		info := instr[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		payload, _ := info["payloadToSign"].(string)
		if info["accountType"] != "EMBEDDED_WALLET" || payload == "" { // R-QUOTE-29
			t.Fatalf("paymentInstructions %v", instr)
		}
		path := "/quotes/" + q["id"].(string) + "/execute"
		_, _, otherKey := e.wlLoggedInAnother(t)
		before := e.qtCounts(t)
		// R-QUOTE-30: unsigned or wrongly signed executions are refused with
		// the 401 signature codes; one stamped over payloadToSign executes.
		expect(t, e.do("POST", path, nil), http.StatusUnauthorized, "WALLET_SIGNATURE_MISSING")
		expect(t, e.do("POST", path, nil, withHeader(signedretry.HeaderSignature, "junk")), http.StatusUnauthorized, "WALLET_SIGNATURE_MALFORMED")
		stranger, _ := wallets.NewKey()
		expect(t, e.do("POST", path, nil, withHeader(signedretry.HeaderSignature, stamp(t, stranger, payload))),
			http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		expect(t, e.do("POST", path, nil, withHeader(signedretry.HeaderSignature, stamp(t, key, payload+"x"))),
			http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		expect(t, e.do("POST", path, nil, withHeader(signedretry.HeaderSignature, stamp(t, otherKey, payload))),
			http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		if got := e.qtCounts(t); got != before {
			t.Fatalf("refused executions changed state:\n%s\n%s", before, got)
		}
		if bal := acAmount(t, e.wlWallet(t, owner), "balance"); bal != 5_000_000 {
			t.Fatalf("wallet balance %d after refused executions", bal)
		}
		r = e.do("POST", path, nil, withHeader(signedretry.HeaderSignature, stamp(t, key, payload)))
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "PROCESSING" { // R-QUOTE-30
			t.Fatalf("executed quote %s", r.Body)
		}
		if bal := acAmount(t, e.wlWallet(t, owner), "balance"); bal != 4_000_000 {
			t.Fatalf("wallet balance %d after execution", bal)
		}
		// Once: the same stamp again does not move money twice.
		expect(t, e.do("POST", path, nil, withHeader(signedretry.HeaderSignature, stamp(t, key, payload))), http.StatusConflict, "CONFLICT")
		if bal := acAmount(t, e.wlWallet(t, owner), "balance"); bal != 4_000_000 {
			t.Fatalf("wallet balance %d after a second execution", bal)
		}
		e.acAudit(t)
	})
}
