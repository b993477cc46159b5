package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

// wlEnable turns embedded wallets on for the sandbox platform.
func (e *env) wlEnable(t *testing.T) {
	t.Helper()
	r := e.do("PATCH", "/config", `{"embeddedWalletConfig":{"appName":"Acme Wallet","otpLength":6}}`,
		withHeader("Content-Type", "application/json"))
	expect(t, r, http.StatusOK, "")
	if _, ok := r.JSON(t)["embeddedWalletConfig"].(map[string]any); !ok {
		t.Fatalf("embeddedWalletConfig not echoed: %s", r.Body)
	}
}

// wlWallet returns the customer's embedded wallet as listed.
func (e *env) wlWallet(t *testing.T, customerID string) map[string]any {
	t.Helper()
	list := e.acList(t, acCustomers, "customerId="+customerID+"&type=EMBEDDED_WALLET")
	if len(list) != 1 {
		t.Fatalf("%d embedded wallets for %s, want 1", len(list), customerID)
	}
	return list[0]
}

// R-IACCT-01, R-IACCT-02: once the platform enables embedded wallets, each
// customer has one EMBEDDED_WALLET account in USDB, created with the
// customer, with privateEnabled, funding instructions and a signing key kept
// sealed; customers created earlier get theirs when accounts are next read.
// It is an ordinary ledger account: sandbox funding credits it.
func TestWallets_Provisioning_R_IACCT_01_R_IACCT_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		before := e.acCustomer(t)
		if list := e.acList(t, acCustomers, "type=EMBEDDED_WALLET"); len(list) != 0 {
			t.Fatalf("wallets before the platform enabled them: %v", list)
		}
		e.wlEnable(t)
		after := e.acCustomer(t)
		ctx := context.Background()
		rows, err := e.db.Read().InternalAccountsOfOwner(ctx, e.acTenant(), after)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rows {
			if r.Type == accounts.TypeEmbeddedWallet {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d wallets created with the customer, want 1", n)
		}
		for _, cid := range []string{before, after} {
			w := e.wlWallet(t, cid)
			if w["privateEnabled"] != false {
				t.Fatalf("privateEnabled %v", w["privateEnabled"])
			}
			if cur := w["balance"].(map[string]any)["currency"].(map[string]any)["code"]; cur != "USDB" {
				t.Fatalf("wallet currency %v", cur)
			}
			instr := w["fundingPaymentInstructions"].([]any)
			if len(instr) == 0 {
				t.Fatal("no funding instructions")
			}
			key, err := e.db.Read().GetWalletKey(ctx, e.acTenant(), w["id"].(string))
			if err != nil {
				t.Fatalf("wallet key: %v", err)
			}
			if _, compressed, err := wallets.ParsePublicKey(key.PublicKey); err != nil || !compressed {
				t.Fatalf("public key %q: %v", key.PublicKey, err)
			}
			sealed, _ := base64.StdEncoding.DecodeString(key.SealedPrivateKey)
			if len(sealed) < 32+28 {
				t.Fatalf("sealed key of %d bytes", len(sealed))
			}
		}
		// Other account types carry no privateEnabled.
		usd := e.acAccount(t, after, "USD")
		if _, ok := usd["privateEnabled"]; ok {
			t.Fatal("privateEnabled on a USD account")
		}
		// Funding in sandbox moves money into the wallet through the ledger.
		w := e.wlWallet(t, after)
		funded := e.acFund(t, w["id"].(string), 2_500_000)
		if got := acAmount(t, funded, "balance"); got != 2_500_000 {
			t.Fatalf("balance %d after funding", got)
		}
		e.acAudit(t)
		// A second list does not provision again.
		if list := e.acList(t, acCustomers, "type=EMBEDDED_WALLET"); len(list) != 2 {
			t.Fatalf("%d wallets, want 2", len(list))
		}
	})
}

// The embedded-wallet setting is validated like the rest of the
// configuration, with every invalid field listed.
func TestWallets_ConfigValidation(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("PATCH", "/config", `{"embeddedWalletConfig":{"otpLength":3,"expirationSeconds":0,"sendFromEmailAddress":"nope","logoUrl":"http://x.example/a.png"}}`,
			withHeader("Content-Type", "application/json"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		fe := fieldErrors(t, r)
		for _, f := range []string{"otpLength", "expirationSeconds", "sendFromEmailAddress", "logoUrl"} {
			if _, ok := fe["embeddedWalletConfig."+f]; !ok {
				t.Errorf("no error for %s: %v", f, fe)
			}
		}
		if strings.Contains(string(e.do("GET", "/config", nil).Body), "embeddedWalletConfig") {
			t.Fatal("a refused patch enabled wallets")
		}
	})
}
