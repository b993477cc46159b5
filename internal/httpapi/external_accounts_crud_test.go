package httpapi

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

var eaIDRE = regexp.MustCompile(`^ExternalAccount:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// R-EACCT-01, R-EACCT-04, R-EACCT-05, R-EACCT-06, R-CONV-02, R-CONV-10:
// create, list, get and delete on the customer path.
func TestExternalAccounts_CustomerRoundTrip_R_EACCT_01_04_05_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		a := e.eaCreate(t, eaCustomers, cwith(eaUSD(cust, "12345678"), "platformAccountId", "acct-1"))
		id := a["id"].(string)
		info := a["accountInfo"].(map[string]any)
		if !eaIDRE.MatchString(id) || a["customerId"] != cust || a["status"] != "ACTIVE" || a["currency"] != "USD" ||
			a["platformAccountId"] != "acct-1" || a["bankAccountValidationStatus"] != "VALIDATED" || a["trusted"] != false ||
			info["accountType"] != "USD_ACCOUNT" || info["bankAccountType"] != "CHECKING" || info["routingNumber"] != "021000021" ||
			info["beneficiary"].(map[string]any)["fullName"] != "Jane Doe" {
			t.Fatalf("created %v", a)
		}
		// SAVINGS is the other bankAccountType (R-EACCT-04); BUSINESS beneficiaries (R-EACCT-05).
		b := e.eaCreate(t, eaCustomers, cobj{"customerId": cust, "currency": "USD", "accountInfo": cobj{
			"accountType": "USD_ACCOUNT", "routingNumber": "011000015", "accountNumber": "987654321", "bankAccountType": "SAVINGS",
			"beneficiary": cobj{"beneficiaryType": "BUSINESS", "legalName": "Acme LLC"}}})
		if b["accountInfo"].(map[string]any)["bankAccountType"] != "SAVINGS" || b["platformAccountId"] == "" {
			t.Fatalf("%v", b)
		}
		w := e.eaCreate(t, eaCustomers, eaWallet(cust, "SOLANA_WALLET", "USDC", "", "address", eaSolanaSigner(t).signer))

		got := e.do("GET", eaCustomers+"/"+id, nil)
		expect(t, got, http.StatusOK, "")
		if got.JSON(t)["id"] != id {
			t.Fatal(got.Body)
		}
		list := e.do("GET", eaCustomers+"?customerId="+cust, nil).JSON(t)
		if list["totalCount"].(float64) != 3 || len(list["data"].([]any)) != 3 || list["hasMore"] != false {
			t.Fatalf("list %v", list)
		}
		for q, n := range map[string]float64{"currency=USD": 2, "accountType=SOLANA_WALLET": 1, "status=ACTIVE": 3,
			"customerId=Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b": 0, "accountType=SOLANA_WALLET&currency=USD": 0} {
			if got := e.do("GET", eaCustomers+"?"+q, nil).JSON(t)["totalCount"].(float64); got != n {
				t.Errorf("%s: %v, want %v", q, got, n)
			}
		}
		// Paging with limit and cursor.
		p1 := e.do("GET", eaCustomers+"?limit=2", nil).JSON(t)
		if p1["hasMore"] != true || len(p1["data"].([]any)) != 2 {
			t.Fatalf("page 1 %v", p1)
		}
		p2 := e.do("GET", eaCustomers+"?limit=2&cursor="+p1["nextCursor"].(string), nil).JSON(t)
		if p2["hasMore"] != false || len(p2["data"].([]any)) != 1 || p2["data"].([]any)[0].(map[string]any)["id"] != w["id"] {
			t.Fatalf("page 2 %v", p2)
		}
		// Bad filters are field errors.
		r := e.do("GET", eaCustomers+"?accountType=CHEQUE&status=GONE&currency=usd", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if f := fieldErrors(t, r); f["accountType"] != "enum" || f["status"] != "enum" || f["currency"] != "pattern" {
			t.Fatalf("%v", f)
		}

		expect(t, e.do("DELETE", eaCustomers+"/"+id, nil), http.StatusNoContent, "")
		expect(t, e.do("GET", eaCustomers+"/"+id, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, e.do("DELETE", eaCustomers+"/"+id, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if n := e.do("GET", eaCustomers, nil).JSON(t)["totalCount"].(float64); n != 2 {
			t.Fatalf("deleted account still listed: %v", n)
		}
		// The customer's accounts are not the platform's.
		expect(t, e.do("GET", eaPlatform+"/"+b["id"].(string), nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if n := e.do("GET", eaPlatform, nil).JSON(t)["totalCount"].(float64); n != 0 {
			t.Fatalf("platform list shows customers' accounts: %v", n)
		}
	})
}

// R-EACCT-01 on the platform path; platform and customer accounts stay apart.
func TestExternalAccounts_PlatformRoundTrip_R_EACCT_01(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a := e.eaCreate(t, eaPlatform, eaUSD("", "55555555"))
		id := a["id"].(string)
		if _, has := a["customerId"]; has || a["bankAccountValidationStatus"] != "VALIDATED" {
			t.Fatalf("platform account %v", a)
		}
		if _, has := a["trusted"]; has {
			t.Fatal("trust is a customer-account notion")
		}
		ev := eaEVMSigner(t, "BASE_WALLET", "USDC")
		w := e.eaCreate(t, eaPlatform, eaWallet("", "BASE_WALLET", "USDC", "THIRD_PARTY", ev.info...))
		if w["status"] != "ACTIVE" || w["ownershipType"] != "THIRD_PARTY" {
			t.Fatalf("%v", w)
		}
		expect(t, e.do("GET", eaPlatform+"/"+id, nil), http.StatusOK, "")
		expect(t, e.do("GET", eaCustomers+"/"+id, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, e.do("DELETE", eaCustomers+"/"+id, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		list := e.do("GET", eaPlatform, nil).JSON(t)
		if list["totalCount"].(float64) != 2 {
			t.Fatalf("%v", list)
		}
		if n := e.do("GET", eaCustomers, nil).JSON(t)["totalCount"].(float64); n != 0 {
			t.Fatalf("customer list shows platform accounts: %v", n)
		}
		// The platform body has no customerId.
		r := e.do("POST", eaPlatform, cwith(eaUSD("", "12121212"), "customerId", "Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if f := fieldErrors(t, r); f["customerId"] != "additionalProperties" {
			t.Fatalf("%v", f)
		}
		expect(t, e.do("GET", eaPlatform+"?customerId=x", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("DELETE", eaPlatform+"/"+id, nil), http.StatusNoContent, "")
		expect(t, e.do("GET", eaPlatform+"/"+id, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
	})
}

// Tenancy: another environment's token sees none of these accounts, gets
// 404 ACCOUNT_NOT_FOUND everywhere and changes nothing; a customer of
// another environment cannot be given an account; a deleted customer's
// accounts go with it.
func TestExternalAccounts_Tenancy(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		a := e.eaCreate(t, eaCustomers, eaUSD(cust, "12345678"))
		id := a["id"].(string)
		ev := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
		w := e.eaCreate(t, eaPlatform, eaWallet("", "ETHEREUM_WALLET", "USDC", "FIRST_PARTY", ev.info...))
		wid := w["id"].(string)
		prod := withCreds(e.production)
		before := e.eaCounts(t)
		for _, c := range []struct{ method, path, body string }{
			{"GET", eaCustomers + "/" + id, ""},
			{"DELETE", eaCustomers + "/" + id, ""},
			{"POST", eaCustomers + "/" + id + "/trust", ""},
			{"POST", eaCustomers + "/" + id + "/trust/confirm", `{"code":"123456"}`},
			{"GET", eaPlatform + "/" + wid, ""},
			{"DELETE", eaPlatform + "/" + wid, ""},
			{"POST", eaPlatform + "/" + wid + "/challenge", `{"method":"WALLET_SIGNATURE"}`},
			{"POST", eaPlatform + "/" + wid + "/verify", `{"signature":"0x00"}`},
		} {
			var body any
			if c.body != "" {
				body = c.body
			}
			expect(t, e.do(c.method, c.path, body, prod), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		}
		for _, p := range []string{eaCustomers, eaPlatform} {
			if n := e.do("GET", p, nil, prod).JSON(t)["totalCount"].(float64); n != 0 {
				t.Fatalf("%s lists another environment's accounts", p)
			}
		}
		expect(t, e.do("POST", eaCustomers, eaUSD(cust, "33333333"), prod), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		if e.eaCounts(t) != before {
			t.Fatal("another environment's requests had an effect")
		}
		if e.eaStatus(t, eaPlatform, wid) != "PENDING_OWNERSHIP_VERIFICATION" {
			t.Fatal("status changed")
		}

		expect(t, e.do("DELETE", "/customers/"+cust, nil), http.StatusOK, "")
		expect(t, e.do("GET", eaCustomers+"/"+id, nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if n := e.do("GET", eaCustomers, nil).JSON(t)["totalCount"].(float64); n != 0 {
			t.Fatal("a deleted customer's accounts are still listed")
		}
		expect(t, e.do("POST", eaCustomers, eaUSD(cust, "44444444")), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		// A VIEW-only concern: writes need TRANSACT or MANAGE (checked by
		// the route table; reads are allowed to every token).
	})
}

// R-EACCT-02, R-EACCT-03, R-EACCT-04, R-ERR-02, R-ERR-03: every bad input
// is 400 INVALID_INPUT listing exactly its invalid fields, and creates
// nothing.
func TestExternalAccounts_BadInputs_R_EACCT_02_03_04_R_ERR_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		usd := func(kv ...any) cobj {
			body := eaUSD(cust, "12345678")
			body["accountInfo"] = cwith(body["accountInfo"].(cobj), kv...)
			return body
		}
		cases := []struct {
			name string
			path string
			body any
			want map[string]string
		}{
			{"R-EACCT-02 no customerId", eaCustomers, eaUSD("", "12345678"), map[string]string{"customerId": "required"}},
			{"R-EACCT-03 no bankAccountType", eaCustomers, usd("bankAccountType", nil), map[string]string{"accountInfo.bankAccountType": "required"}},
			{"R-EACCT-04 bankAccountType BROKERAGE", eaCustomers, usd("bankAccountType", "BROKERAGE"), map[string]string{"accountInfo.bankAccountType": "enum"}},
			{"two invalid fields", eaCustomers, usd("routingNumber", "123456789", "accountNumber", "12ab"),
				map[string]string{"accountInfo.routingNumber": "format", "accountInfo.accountNumber": "format"}},
			{"unknown field and bad enum", eaCustomers, cwith(usd(), "colour", "blue", "ownershipType", "MINE"),
				map[string]string{"colour": "additionalProperties", "ownershipType": "enum"}},
			{"field of another type", eaCustomers, usd("clabeNumber", "002010077777777771"), map[string]string{"accountInfo.clabeNumber": "additionalProperties"}},
			{"currency of another type", eaCustomers, cwith(usd(), "currency", "EUR"), map[string]string{"currency": "enum"}},
			{"wrong JSON type", eaCustomers, cwith(usd(), "currency", 840), map[string]string{"currency": "type"}},
			{"IBAN checksum", eaCustomers, cobj{"customerId": cust, "currency": "EUR", "accountInfo": cobj{"accountType": "EUR_ACCOUNT",
				"iban": "DE89370400440532013001", "beneficiary": cwith(eaIndividual(), "countryOfResidence", "DE")}},
				map[string]string{"accountInfo.iban": "format"}},
			{"EIP-55 checksum", eaPlatform, eaWallet("", "POLYGON_WALLET", "USDC", "", "address", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"),
				map[string]string{"accountInfo.address": "format"}},
			{"Tron checksum", eaPlatform, eaWallet("", "TRON_WALLET", "USDT", "", "address", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"),
				map[string]string{"accountInfo.address": "format"}},
			{"Lightning needs one destination", eaPlatform, eaWallet("", "LIGHTNING", "BTC", ""), map[string]string{"accountInfo.invoice": "required"}},
			{"malformed customerId", eaCustomers, eaUSD("42", "12345678"), map[string]string{"customerId": "pattern"}},
		}
		for _, c := range cases {
			before := e.eaCounts(t)
			r := e.do("POST", c.path, c.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			got := fieldErrors(t, r)
			if len(got) != len(c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
			for f, con := range c.want {
				if got[f] != con {
					t.Errorf("%s: %s is %q, want %q (%v)", c.name, f, got[f], con, got)
				}
			}
			if e.eaCounts(t) != before {
				t.Errorf("%s: a refused create left rows behind", c.name)
			}
		}
		expect(t, e.do("POST", eaCustomers, `{"currency":`), http.StatusBadRequest, "INVALID_INPUT")
		// An unknown customer is 404 and creates nothing.
		before := e.eaCounts(t)
		expect(t, e.do("POST", eaCustomers, eaUSD("Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", "12345678")),
			http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		if e.eaCounts(t) != before {
			t.Fatal("a refused create left rows behind")
		}
	})
}

// R-EACCT-07, R-ERR-05: the same account twice is 409
// DUPLICATE_EXTERNAL_ACCOUNT naming the existing one; platformAccountId is
// in the details only when the existing account is the platform's.
func TestExternalAccounts_Duplicate_R_EACCT_07_R_ERR_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		other := e.eaCustomer(t)
		first := e.eaCreate(t, eaCustomers, eaUSD(cust, "12345678"))
		before := e.eaCounts(t)
		r := e.do("POST", eaCustomers, cwith(eaUSD(cust, "12345678"), "platformAccountId", "again"))
		expect(t, r, http.StatusConflict, "DUPLICATE_EXTERNAL_ACCOUNT")
		d := r.JSON(t)["details"].(map[string]any)
		if d["externalAccountId"] != first["id"] {
			t.Fatalf("details %v", d)
		}
		if _, has := d["platformAccountId"]; has {
			t.Fatal("platformAccountId only for the platform's accounts (R-ERR-05)")
		}
		if e.eaCounts(t) != before {
			t.Fatal("a duplicate left rows behind")
		}
		// Another customer, and the platform, may hold the same account.
		e.eaCreate(t, eaCustomers, eaUSD(other, "12345678"))
		p := e.eaCreate(t, eaPlatform, cwith(eaUSD("", "12345678"), "platformAccountId", "treasury-1"))
		r = e.do("POST", eaPlatform, eaUSD("", "12345678"))
		expect(t, r, http.StatusConflict, "DUPLICATE_EXTERNAL_ACCOUNT")
		d = r.JSON(t)["details"].(map[string]any)
		if d["externalAccountId"] != p["id"] || d["platformAccountId"] != "treasury-1" {
			t.Fatalf("platform duplicate details %v", d)
		}
		// EVM addresses are the same account in any case, on the same chain.
		ev := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
		addr := ev.info[1].(string)
		wa := e.eaCreate(t, eaCustomers, eaWallet(cust, "ETHEREUM_WALLET", "USDC", "", "address", addr))
		r = e.do("POST", eaCustomers, eaWallet(cust, "ETHEREUM_WALLET", "USDT", "", "address", strings.ToLower(addr)))
		expect(t, r, http.StatusConflict, "DUPLICATE_EXTERNAL_ACCOUNT")
		if r.JSON(t)["details"].(map[string]any)["externalAccountId"] != wa["id"] {
			t.Fatal(r.Body)
		}
		e.eaCreate(t, eaCustomers, eaWallet(cust, "BASE_WALLET", "USDC", "", "address", addr))
		// A deleted account can be registered again.
		expect(t, e.do("DELETE", eaCustomers+"/"+first["id"].(string), nil), http.StatusNoContent, "")
		again := e.eaCreate(t, eaCustomers, eaUSD(cust, "12345678"))
		if again["id"] == first["id"] {
			t.Fatal("a new account")
		}
	})
}

// R-IDEM-02 on create: the same key replays the first answer; one account.
func TestExternalAccounts_IdempotentCreate(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		body := eaUSD(cust, "12345678")
		first := e.do("POST", eaCustomers, body, key("ea-1"))
		expect(t, first, http.StatusCreated, "")
		second := e.do("POST", eaCustomers, body, key("ea-1"))
		if second.Status != http.StatusCreated || string(second.Body) != string(first.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %d %s", second.Status, second.Body)
		}
		rows, _, err := e.db.Read().ListExternalAccounts(context.Background(), e.custTenant(), store.ExternalAccountFilter{}, "", 10)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%d accounts, %v", len(rows), err)
		}
		// Without the key, the same body is a duplicate.
		expect(t, e.do("POST", eaCustomers, body), http.StatusConflict, "DUPLICATE_EXTERNAL_ACCOUNT")
	})
}
