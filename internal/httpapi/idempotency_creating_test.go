package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// POST routes that create nothing of their own: they act on an existing
// resource (a transition, a code sent, a check made), so the spec's
// Idempotency-Key, which makes a retried creation safe, does not apply.
// Each says why.
var postActions = map[string]string{
	"POST /internal-accounts/{id}/export/approve":                           "approves a waiting export; approving again changes nothing",
	"POST /sandbox/oidc/tokens":                                             "signs an ID token, as a provider does at each sign-in; nothing is stored",
	"POST /customers/{customerId}/verify-email":                             "sends a code to an existing customer",
	"POST /customers/{customerId}/verify-email/confirm":                     "checks a code",
	"POST /customers/{customerId}/verify-phone":                             "sends a code to an existing customer",
	"POST /customers/{customerId}/verify-phone/confirm":                     "checks a code",
	"POST /customers/external-accounts/{externalAccountId}/trust":           "starts a transition of an existing account",
	"POST /customers/external-accounts/{externalAccountId}/trust/confirm":   "confirms a transition",
	"POST /customers/external-accounts/{externalAccountId}/untrust":         "starts a transition of an existing account",
	"POST /customers/external-accounts/{externalAccountId}/untrust/confirm": "confirms a transition",
	"POST /customers/external-accounts/{externalAccountId}/challenge":       "issues a fresh ownership challenge; the latest one counts",
	"POST /customers/external-accounts/{externalAccountId}/verify":          "answers a challenge",
	"POST /platform/external-accounts/{externalAccountId}/challenge":        "issues a fresh ownership challenge; the latest one counts",
	"POST /platform/external-accounts/{externalAccountId}/verify":           "answers a challenge",
	"POST /transactions/{transactionId}/approve":                            "a transition of an existing transaction",
	"POST /transactions/{transactionId}/reject":                             "a transition of an existing transaction",
	"POST /transactions/{transactionId}/cancel":                             "a transition of an existing transaction",
	"POST /sandbox/transactions/{transactionId}/return":                     "a transition of an existing transaction",
	"POST /sandbox/transactions/{transactionId}/dishonor":                   "a transition of an existing transaction",
	"POST /sandbox/transactions/{transactionId}/contest":                    "a transition of an existing transaction",
	"POST /internal-accounts/{id}/confirm-statement":                        "idempotent by its own rule: the first confirmation is kept (R-STMT-14)",
	"POST /events/{eventId}/redeliver":                                      "sends an existing event again",
	"POST /webhooks/secret/rotate":                                          "replaces the signing secret; a replay would show a secret no longer stored",
	"POST /sandbox/webhooks/test":                                           "reports the receiver's answer now; a replay would report an old one",
	"POST /crypto/estimate-withdrawal-fee":                                  "computes an estimate and changes nothing",
	// Embedded wallets: the signed retry (step 1's 202 and its Request-Id)
	// is what makes these exactly-once; a stored 202 replayed under one
	// Idempotency-Key would hide step 2 from the service.
	"POST /auth/credentials":                "signed retry once a credential is verified (Request-Id runs it once); before, a second credential of a kind is 409",
	"POST /auth/credentials/{id}/challenge": "sends a fresh code for an existing credential; the latest one counts",
	"POST /auth/credentials/{id}/verify":    "answers a challenge",
	"POST /auth/sessions/{id}/refresh":      "signed retry: its Request-Id runs it once",
	"POST /internal-accounts/{id}/export":   "signed retry: its Request-Id runs it once",
	"POST /auth/delegated-keys":             "signed retry: its Request-Id runs it once",
	// Strong customer authentication (issue 19).
	"POST /sca/factors":                                  "starts an enrolment that replaces the pending one; a stored TOTP answer would keep its secret in clear",
	"POST /sca/factors/confirm":                          "checks a code",
	"POST /sca/login/start":                              "sends a fresh code; the latest login counts",
	"POST /sca/login/complete":                           "checks a code",
	"POST /sca/record-event":                             "records an event as it happens; a replay would hide a second failed login",
	"POST /sca/factors/reset/{resetId}/complete":         "a transition of an existing reset",
	"POST /sandbox/sca/factors/reset/{resetId}/liveness": "a transition of an existing reset",
	"POST /quotes/{quoteId}/authorize/resend":            "sends a fresh code for an existing challenge",
	// Card data: a stored response would keep a bearer secret or a
	// provisioning payload, which must never be stored.
	"POST /cards/{id}/reveal":                     "mints a single-use link, a bearer secret that must not be stored for a replay",
	"POST /cards/{id}/tokenize":                   "the provisioning payload must never be stored; each call makes a new one",
	"POST /cards/{id}/set-pin":                    "replaces the PIN's verification value; a repeat sets the same PIN again",
	"POST /cards/{id}/pin/unblock":                "a transition of the existing PIN, allowed once per rolling seven days",
	"POST /sandbox/cards/{id}/simulate/pin_entry": "a PIN entry at a terminal: each one counts",
	// Agents (issue 22). Idempotency records are kept per tenant, which an
	// agent shares with its platform: an agent's key could replay a
	// platform's response, so agent routes take none and are safe to repeat
	// by their own rules.
	"POST /agents/{agentId}/device-codes":               "regenerates: the latest code counts, and its secret is never stored for a replay",
	"POST /agents/device-codes/status":                  "a read (the code travels in the body, not the URL)",
	"POST /agents/device-codes/redeem":                  "single use by its own rule: a second redeem of a code returns no token (R-AGENT-09)",
	"POST /agents/{agentId}/actions/{actionId}/approve": "a transition of an existing action: only PENDING_APPROVAL can be decided (R-AGENT-20)",
	"POST /agents/{agentId}/actions/{actionId}/reject":  "a transition of an existing action: only PENDING_APPROVAL can be decided (R-AGENT-20)",
	"POST /agents/me/quotes":                            "agent credential (see above); a repeated quote moves no money and expires unexecuted",
	"POST /agents/me/quotes/{quoteId}/execute":          "agent credential (see above); a quote has one action: a repeat is 409 and never executes twice",
	"POST /agents/me/external-accounts":                 "agent credential (see above); the same account twice is 409 DUPLICATE_EXTERNAL_ACCOUNT",
	"POST /agents/me/transfer-out":                      "agent credential (see above); each is a new action on a new quote, refused or counted by the policy",
	"POST /agents/me/transfer-in":                       "agent credential (see above); each is a new action on a new quote, refused or counted by the policy",
	"POST /agents/me/kyc-link":                          "agent credential (see above); each call issues a fresh hosted link for the same customer, moving nothing",
	"POST /agents/me/deposits":                          "agent credential (see above); each call makes a new target, and only paying one moves money",
	"POST /agents/me/cards":                             "agent credential (see above); each call is a new card counted against the policy's limits like a payment",
	"POST /agents/me/cards/{cardId}/reveal":             "mints a single-use link, a bearer secret that must not be stored for a replay (audited per call)",
	"POST /sandbox/agents/deposits/{depositId}/pay":     "a transition of an existing deposit: only a PENDING one is paid, so a repeat credits nothing",
	"POST /agents/me/verifications":                     "agent credential (see above); submits the agent's one customer, whose status decides the answer (final: 400)",
}

// Issue 16, item 10: every POST that creates something honours
// Idempotency-Key (R-IDEM-02). The server's own route table is audited, so
// a new POST fails here until it is idempotent or listed as an action.
func TestIdempotency_EveryCreatingPOSTHonoursTheKey_R_IDEM_02(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite(t), Options{})
	for _, rt := range e.srv.table {
		method, _, _ := strings.Cut(rt.pattern, " ")
		if method != http.MethodPost || rt.public {
			continue
		}
		why, action := postActions[rt.pattern]
		switch {
		case rt.idempotent && action:
			t.Errorf("%s honours Idempotency-Key and is listed as an action (%s)", rt.pattern, why)
		case !rt.idempotent && !action:
			t.Errorf("%s creates something and ignores Idempotency-Key", rt.pattern)
		}
	}
}

// POST /tokens with one key twice: one token, the same id; the secret is in
// the first response only (it is never stored in clear). The key reused
// for another request is 409.
func TestIdempotency_Tokens_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		count := func() float64 { return e.do("GET", "/tokens", nil).JSON(t)["totalCount"].(float64) }
		before := count()
		body := `{"name":"ci","permissions":["VIEW"]}`
		first := e.do("POST", "/tokens", body, withHeader("Idempotency-Key", "tok-1"))
		expect(t, first, http.StatusCreated, "")
		again := e.do("POST", "/tokens", body, withHeader("Idempotency-Key", "tok-1"))
		expect(t, again, http.StatusCreated, "")
		a, b := first.JSON(t), again.JSON(t)
		if a["id"] != b["id"] || a["clientId"] != b["clientId"] || a["clientSecret"] == nil || b["clientSecret"] != nil ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %v\nreplay %v", a, b)
		}
		if got := count(); got != before+1 {
			t.Fatalf("%v tokens, want %v: the repeat created another", got, before+1)
		}
		expect(t, e.do("POST", "/tokens", `{"name":"other","permissions":["VIEW"]}`, withHeader("Idempotency-Key", "tok-1")),
			http.StatusConflict, "CONFLICT")
	})
}

// A sandbox deposit repeated with its key moves the money once (R-IDEM-02).
func TestIdempotency_SandboxDepositOnce_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		c := e.acCustomer(t)
		acct := e.acAccount(t, c, "USD")["id"].(string)
		body := cobj{"accountId": acct, "amount": 2_500}
		first := e.do("POST", "/sandbox/incoming-payments", body, withHeader("Idempotency-Key", "dep-1"))
		expect(t, first, http.StatusOK, "")
		again := e.do("POST", "/sandbox/incoming-payments", body, withHeader("Idempotency-Key", "dep-1"))
		expect(t, again, http.StatusOK, "")
		if first.JSON(t)["id"] != again.JSON(t)["id"] {
			t.Fatalf("two deposits: %s / %s", first.Body, again.Body)
		}
		if b := qtAmount(t, e.acAccount(t, c, "USD"), "balance"); b != 2_500 {
			t.Fatalf("balance %d after a replayed deposit", b)
		}
		e.acAudit(t)
	})
}
