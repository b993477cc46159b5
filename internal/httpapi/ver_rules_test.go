package httpapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// R-VER-03: the deprecated items this service has still work, one subtest
// each. The rule's list also names items this service does not have, so
// they are not asserted here (nothing to test, nothing faked):
//   - reconciliationInstructions.transactionHash for wallet transfers: our
//     ReconciliationInstructions carries only reference; an on-chain hash is
//     on railDetails and the deprecated onChainTransaction (asserted below),
//     and TestPayouts_Onchain_R_TXN_18_R_TXN_24 asserts it is not in
//     reconciliationInstructions.
//
// REFUNDED is "tolerated": no flow of ours ends in it (refunds are reported
// by the refund object of a FAILED transaction), so the subtest asserts
// what a client sees: the status filter accepts it.
func TestVersioning_DeprecatedItems_R_VER_03(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t, "USD", "USDC")
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 1_000_000)
		ext := e.qtExternal(t, a, "1234561234")

		t.Run("POST /transfer-out answers 200 with the OUTGOING transaction", func(t *testing.T) {
			r := e.qdo("POST", "/transfer-out", cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": ext}, "amount": 2500})
			expect(t, r, http.StatusOK, "") // R-VER-03
			if x := r.JSON(t); x["type"] != "OUTGOING" || qtAmount(t, x, "sentAmount") != 2500 {
				t.Fatalf("transfer-out: %v", x)
			}
		})
		t.Run("POST /transfer-in answers 200 with the INCOMING transaction", func(t *testing.T) {
			before := e.qtBalance(t, a, "USD")
			r := e.qdo("POST", "/transfer-in", cobj{"source": cobj{"accountId": ext}, "destination": cobj{"accountId": src}, "amount": 5000})
			expect(t, r, http.StatusOK, "") // R-VER-03
			if x := r.JSON(t); x["type"] != "INCOMING" || x["status"] != "COMPLETED" {
				t.Fatalf("transfer-in: %v", x)
			}
			if got := e.qtBalance(t, a, "USD"); got != before+5000 {
				t.Fatalf("balance %d, want %d", got, before+5000)
			}
		})
		t.Run("GET /customers/end-user-terms answers version and url", func(t *testing.T) {
			_, version := e.custTerms(t)
			r := e.do("GET", "/customers/end-user-terms", nil)
			expect(t, r, http.StatusOK, "") // R-VER-03
			if m := r.JSON(t); m["version"] != version || m["url"] == "" || m["url"] == nil {
				t.Fatalf("%v", m)
			}
		})
		t.Run("request field endUserTermsConsent is accepted", func(t *testing.T) {
			_, version := e.custTerms(t)
			eut := cobj{"acceptedAt": "2025-10-01T12:00:00Z", "ipAddress": "198.51.100.7", "termsVersion": version, "acceptanceMethod": "CHECKBOX"}
			r := e.qdo("POST", "/customers", cwith(custIndividual("Old Client"), "endUserTermsConsent", eut))
			expect(t, r, http.StatusCreated, "") // R-VER-03
			c := r.JSON(t)
			list, _ := c["agreementConsents"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["termsVersion"] != version {
				t.Fatalf("agreementConsents %v", c["agreementConsents"])
			}
			if m, _ := c["endUserTermsConsent"].(map[string]any); m["termsVersion"] != version {
				t.Fatalf("endUserTermsConsent %v", c["endUserTermsConsent"])
			}
		})
		t.Run("flat originator fields are populated on an incoming transfer", func(t *testing.T) {
			r := e.qdo("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": 4200, "paymentRail": "WIRE", "remittanceInformation": "rent"})
			expect(t, r, http.StatusOK, "")
			x, _ := e.txGet(t, r.JSON(t)["id"].(string))
			s := x["source"].(map[string]any)
			for _, f := range []string{"accountHolderName", "accountIdentifier", "bankName", "bankIdentifier"} {
				if v, _ := s[f].(string); v == "" { // R-VER-03
					t.Fatalf("source.%s missing: %v", f, s)
				}
			}
			if s["paymentRail"] != "WIRE" || s["remittanceInformation"] != "rent" {
				t.Fatalf("source %v", s)
			}
		})
		t.Run("onChainTransaction is populated on a crypto payout", func(t *testing.T) {
			addr := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC").info[1].(string)
			w := e.eaCreate(t, eaCustomers, eaWallet(a, "ETHEREUM_WALLET", "USDC", "", "address", addr), jsonBody)
			q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
				"destination":        cobj{"destinationType": "ACCOUNT", "accountId": w["id"]},
				"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 10_000, "immediatelyExecute": true}, jsonBody)
			e.railsDrain(t)
			x, r := e.txGet(t, q["transactionId"].(string))
			hash, _ := railDetailsOf(t, x, "destination")["transactionHash"].(string)
			oc, ok := x["destination"].(map[string]any)["onChainTransaction"].(map[string]any)
			if x["status"] != "COMPLETED" || hash == "" || !ok || oc["transactionHash"] != hash || oc["network"] != "ETHEREUM" { // R-VER-03
				t.Fatalf("%s", r.Body)
			}
		})
		t.Run("transaction status REFUNDED is tolerated", func(t *testing.T) {
			r := e.qdo("GET", "/transactions?status=REFUNDED", nil)
			expect(t, r, http.StatusOK, "") // R-VER-03
			if _, ok := r.JSON(t)["data"].([]any); !ok {
				t.Fatalf("%s", r.Body)
			}
			expect(t, e.qdo("GET", "/transactions?status=REFUNDEDX", nil), http.StatusBadRequest, "INVALID_INPUT")
		})
		t.Run("encryptedSessionSigningKey for an uncompressed client key", func(t *testing.T) {
			c, _, sess, key := e.wlLoggedIn(t)
			eph := ephemeral(t)
			body := cobj{"clientPublicKey": hex.EncodeToString(eph.PublicKey().Bytes())} // uncompressed, 04…
			r := c.signed("POST", "/auth/sessions/"+sess["id"].(string)+"/refresh", body, key)
			expect(t, r, http.StatusOK, "")
			legacy := r.JSON(t)
			sealed, _ := legacy["encryptedSessionSigningKey"].(string)
			raw, err := wallets.OpenBundle(eph, wallets.InfoLegacy, sealed)
			if err != nil { // R-VER-03
				t.Fatalf("encryptedSessionSigningKey %q: %v", sealed, err)
			}
			sk, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
			if err != nil || wallets.CompressedHex(&sk.PublicKey) != legacy["publicKey"] {
				t.Fatalf("sealed key does not match the session's public key: %v", err)
			}
			// The legacy session key signs for the wallet.
			expect(t, c.signed("DELETE", "/auth/sessions/"+legacy["id"].(string), nil, sk), http.StatusNoContent, "")
			list := c.do("GET", "/auth/sessions?accountId="+c.accountID, nil)
			expect(t, list, http.StatusOK, "")
			if strings.Contains(string(list.Body), legacy["id"].(string)) {
				t.Fatal("the legacy session is still listed after its own signed DELETE")
			}
		})
	})
}
