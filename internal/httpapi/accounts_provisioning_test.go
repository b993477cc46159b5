package httpapi

import (
	"context"
	"net/http"
	"regexp"
	"testing"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// R-IACCT-01, R-IACCT-02: a new customer has one account per supported
// currency, created with the customer (before any list is read), of the
// right type, with a zero balance, funding instructions and card
// capabilities.
func TestAccounts_ProvisionedWithCustomer_R_IACCT_01_R_IACCT_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD", "EUR", "BTC", "USDC", "GBP", "MXN", "BRL", "INR", "USDB")
		cid := e.acCustomer(t)

		// Created in the customer's transaction, not by a later read.
		rows, err := e.db.Read().InternalAccountsOfOwner(context.Background(), e.acTenant(), cid)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 9 {
			t.Fatalf("%d accounts right after creation, want 9", len(rows))
		}

		list := e.acList(t, acCustomers, "customerId="+cid)
		if len(list) != 9 {
			t.Fatalf("%d accounts listed", len(list))
		}
		byCur := map[string]map[string]any{}
		for _, a := range list {
			cur := a["balance"].(map[string]any)["currency"].(map[string]any)["code"].(string)
			byCur[cur] = a
			if !id.Valid(id.InternalAccount, a["id"].(string)) || a["customerId"] != cid || a["status"] != "ACTIVE" {
				t.Fatalf("account %v", a)
			}
			if acAmount(t, a, "balance") != 0 || acAmount(t, a, "totalBalance") != 0 {
				t.Fatalf("new account not empty: %v", a)
			}
			if _, ok := a["cardCapabilities"].(map[string]any); !ok {
				t.Fatalf("no cardCapabilities: %v", a)
			}
			if _, ok := a["routingRule"]; ok {
				t.Fatal("routingRule on a provisioned account")
			}
			want := "INTERNAL_FIAT"
			if cur == "BTC" || cur == "USDC" || cur == "USDB" {
				want = "INTERNAL_CRYPTO"
			}
			if a["type"] != want {
				t.Fatalf("%s account is %v, want %s", cur, a["type"], want)
			}
			if ins := a["fundingPaymentInstructions"].([]any); len(ins) == 0 {
				t.Fatalf("%s account without funding instructions", cur)
			}
		}
		usd := byCur["USD"]
		if usd["balance"].(map[string]any)["currency"].(map[string]any)["decimals"] != 2.0 {
			t.Fatal("USD decimals")
		}
		info := usd["fundingPaymentInstructions"].([]any)[0].(map[string]any)
		if info["isPlatformAccount"] != false {
			t.Fatal("customer account marked as the platform's")
		}
		acctInfo := info["accountOrWalletInfo"].(map[string]any)
		if acctInfo["accountType"] != "USD_ACCOUNT" || externalaccounts.ABARoutingNumber(acctInfo["routingNumber"].(string)) != "" ||
			externalaccounts.USAccountNumber(acctInfo["accountNumber"].(string)) != "" || acctInfo["reference"] == "" ||
			len(acctInfo["paymentRails"].([]any)) != 4 {
			t.Fatalf("USD instructions %v", acctInfo)
		}
		eur := byCur["EUR"]["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if externalaccounts.IBAN(eur["iban"].(string), "DE") != "" || externalaccounts.BIC(eur["swiftCode"].(string)) != "" {
			t.Fatalf("EUR instructions %v", eur)
		}
		mxn := byCur["MXN"]["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if externalaccounts.CLABE(mxn["clabeNumber"].(string)) != "" {
			t.Fatalf("MXN instructions %v", mxn)
		}
		brl := byCur["BRL"]["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if externalaccounts.PixKey(brl["pixKey"].(string), "RANDOM") != "" {
			t.Fatalf("BRL instructions %v", brl)
		}
		btc := byCur["BTC"]["fundingPaymentInstructions"].([]any)
		l1 := btc[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if hrp, _, variant, err := walletsig.DecodeBech32(l1["address"].(string)); err != nil || hrp != "tb" || variant != walletsig.Bech32 {
			t.Fatalf("BTC address %v: %v", l1, err)
		}
		spark := btc[1].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if externalaccounts.SparkAddress(spark["address"].(string)) != "" {
			t.Fatalf("Spark address %v", spark)
		}
		sol := byCur["USDC"]["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if externalaccounts.SolanaAddress(sol["address"].(string)) != "" || sol["assetType"] != "USDC" {
			t.Fatalf("USDC instructions %v", sol)
		}
		inr := byCur["INR"]["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)
		if inr["accountType"] != "SWIFT_ACCOUNT" || inr["country"] != "IN" || externalaccounts.BIC(inr["swiftCode"].(string)) != "" {
			t.Fatalf("INR instructions %v", inr)
		}

		// Each account has its own reference; a second read shows the same
		// details (they are stored, and derived from the id).
		other := e.acAccount(t, e.acCustomer(t), "USD")
		ref := func(a map[string]any) any {
			return a["fundingPaymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["reference"]
		}
		if ref(other) == ref(usd) || !regexp.MustCompile(`^PSD[0-9A-Z]{12}$`).MatchString(ref(usd).(string)) {
			t.Fatalf("references %v and %v", ref(usd), ref(other))
		}
		if again := e.acAccount(t, cid, "USD"); ref(again) != ref(usd) || again["id"] != usd["id"] {
			t.Fatal("an account's details changed between reads")
		}
	})
}

// A customer created in production gets production accounts, which show no
// funding instructions (no banking partner is configured).
func TestAccounts_ProductionAccountsHaveNoInstructions(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t, withCreds(e.production))
		list := e.acList(t, acCustomers, "customerId="+cid, withCreds(e.production))
		if len(list) != 1 || len(list[0]["fundingPaymentInstructions"].([]any)) != 0 {
			t.Fatalf("production accounts %v", list)
		}
		// Tenancy: the sandbox sees neither the customer's accounts nor the
		// customer.
		if got := e.acList(t, acCustomers, "customerId="+cid); len(got) != 0 {
			t.Fatalf("sandbox sees production accounts: %v", got)
		}
	})
}

// The platform's accounts, and customers' accounts in a currency added to
// the configuration later, are created when a list is read, once.
func TestAccounts_EnsuredOnRead_PlatformAndNewCurrency_R_IACCT_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cid := e.acCustomer(t)
		before := e.acCounts(t)
		plat := e.acList(t, acPlatform, "")
		if len(plat) != 1 || plat[0]["type"] != "INTERNAL_FIAT" {
			t.Fatalf("platform accounts %v", plat)
		}
		if _, ok := plat[0]["customerId"]; ok {
			t.Fatal("platform account with a customerId")
		}
		if plat[0]["fundingPaymentInstructions"].([]any)[0].(map[string]any)["isPlatformAccount"] != true {
			t.Fatal("platform account's instructions not marked as the platform's")
		}
		if e.acCounts(t) == before {
			t.Fatal("reading the platform's accounts created nothing")
		}
		again := e.acList(t, acPlatform, "")
		if len(again) != 1 || again[0]["id"] != plat[0]["id"] {
			t.Fatalf("second read %v", again)
		}

		e.acSupport(t, "USD", "EUR", "USDT")
		list := e.acList(t, acCustomers, "customerId="+cid)
		if len(list) != 3 {
			t.Fatalf("%d accounts after adding EUR and USDT", len(list))
		}
		if got := e.acList(t, acCustomers, "customerId="+cid); len(got) != 3 {
			t.Fatal("accounts created twice")
		}
		if plat := e.acList(t, acPlatform, ""); len(plat) != 3 {
			t.Fatalf("%d platform accounts", len(plat))
		}
		// Removing a currency keeps its accounts (they may hold money).
		e.acSupport(t, "USD")
		if got := e.acList(t, acCustomers, "customerId="+cid); len(got) != 3 {
			t.Fatalf("%d accounts after removing currencies", len(got))
		}
		e.acAudit(t)
	})
}

// Provisioning is part of creating the customer: an idempotent replay of
// the creation provisions nothing more.
func TestAccounts_CustomerReplayProvisionsOnce(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r1 := e.do("POST", "/customers", custIndividual("Jane Doe"), withHeader("Idempotency-Key", "cust-1"))
		expect(t, r1, http.StatusCreated, "")
		before := e.acCounts(t)
		r2 := e.do("POST", "/customers", custIndividual("Jane Doe"), withHeader("Idempotency-Key", "cust-1"))
		expect(t, r2, http.StatusCreated, "")
		if e.acCounts(t) != before {
			t.Fatal("replay provisioned again")
		}
		cid := r1.JSON(t)["id"].(string)
		rows, err := e.db.Read().InternalAccountsOfOwner(context.Background(), e.acTenant(), cid)
		if err != nil || len(rows) != 1 || rows[0].Type != accounts.TypeFiat {
			t.Fatalf("accounts %v, %v", rows, err)
		}
	})
}
