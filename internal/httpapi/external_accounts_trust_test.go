package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// R-EACCT-08, R-EACCT-09: a trusted beneficiary cannot be deleted; untrust
// with its confirmation first. Every refused step changes nothing.
func TestExternalAccounts_TrustUntrustDelete_R_EACCT_08_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		id := e.eaCreate(t, eaCustomers, eaUSD(cust, "12345678"))["id"].(string)
		base := eaCustomers + "/" + id

		// Confirming before starting is a conflict.
		expect(t, e.do("POST", base+"/trust/confirm", `{"code":"123456"}`), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", base+"/untrust", nil), http.StatusConflict, "CONFLICT")

		start := e.do("POST", base+"/trust", nil)
		expect(t, start, http.StatusOK, "")
		ch := start.JSON(t)["scaChallenge"].(map[string]any)
		chID := ch["id"].(string)
		if !strings.HasPrefix(chID, "ScaChallenge:") || ch["factor"] != "SMS_OTP" {
			t.Fatalf("%v", ch)
		}
		before := e.eaCounts(t)
		snap := e.do("GET", base, nil).Body
		for _, bad := range []struct {
			body, field string
		}{
			{`{"code":"654321"}`, "code"},
			{`{"code":"12345"}`, "code"},
			{`{}`, "code"},
			{`{"code":"123456","challengeId":"ScaChallenge:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"}`, "challengeId"},
			{`{"passkeyAssertion":{"id":"x"},"origin":"https://app.example"}`, "passkeyAssertion"},
		} {
			r := e.do("POST", base+"/trust/confirm", bad.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if _, ok := fieldErrors(t, r)[bad.field]; !ok {
				t.Fatalf("%s: %s", bad.body, r.Body)
			}
		}
		if e.eaCounts(t) != before || string(e.do("GET", base, nil).Body) != string(snap) {
			t.Fatal("a refused confirmation changed something")
		}
		r := e.do("POST", base+"/trust/confirm", `{"code":"123456","challengeId":"`+chID+`"}`)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["trusted"] != true || e.do("GET", base, nil).JSON(t)["trusted"] != true {
			t.Fatal(r.Body)
		}
		expect(t, e.do("POST", base+"/trust", nil), http.StatusConflict, "CONFLICT")

		// R-EACCT-08.
		before = e.eaCounts(t)
		expect(t, e.do("DELETE", base, nil), http.StatusConflict, "BENEFICIARY_TRUSTED")
		expect(t, e.do("GET", base, nil), http.StatusOK, "")
		if e.eaCounts(t) != before {
			t.Fatal("a refused delete changed something")
		}

		// R-EACCT-09: untrust, still trusted until confirmed.
		expect(t, e.do("POST", base+"/untrust/confirm", `{"code":"123456"}`), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", base+"/untrust", nil), http.StatusOK, "")
		expect(t, e.do("DELETE", base, nil), http.StatusConflict, "BENEFICIARY_TRUSTED")
		r = e.do("POST", base+"/untrust/confirm", `{"code":"123456"}`)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["trusted"] != false {
			t.Fatal(r.Body)
		}
		expect(t, e.do("DELETE", base, nil), http.StatusNoContent, "")

		// Trust lives on customers' accounts only.
		p := e.eaCreate(t, eaPlatform, eaUSD("", "12345678"))["id"].(string)
		expect(t, e.do("POST", eaCustomers+"/"+p+"/trust", nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		// A body on the start is refused.
		id2 := e.eaCreate(t, eaCustomers, eaUSD(cust, "22222222"))["id"].(string)
		expect(t, e.do("POST", eaCustomers+"/"+id2+"/trust", `{"x":1}`), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// An expired trust challenge is refused and changes nothing; a new start
// works. Production has no SCA provider and refuses trust changes clearly.
func TestExternalAccounts_TrustExpiryAndProduction(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		base := eaCustomers + "/" + e.eaCreate(t, eaCustomers, eaUSD(cust, "12345678"))["id"].(string)
		expect(t, e.do("POST", base+"/trust", nil), http.StatusOK, "")
		real := time.Now
		e.db.SetClock(func() time.Time { return real().Add(11 * time.Minute) })
		r := e.do("POST", base+"/trust/confirm", `{"code":"123456"}`)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(r.Code(t)+string(r.Body), "expired") {
			t.Fatal(r.Body)
		}
		if e.do("GET", base, nil).JSON(t)["trusted"] != false {
			t.Fatal("an expired confirmation trusted the account")
		}
		expect(t, e.do("POST", base+"/trust", nil), http.StatusOK, "")
		expect(t, e.do("POST", base+"/trust/confirm", `{"code":"123456"}`), http.StatusOK, "")
		e.db.SetClock(real)

		prod := withCreds(e.production)
		pc := e.eaCustomer(t, prod)
		pid := e.eaCreate(t, eaCustomers, eaUSD(pc, "12345678"), prod)["id"].(string)
		r = e.do("POST", eaCustomers+"/"+pid+"/trust", nil, prod)
		expect(t, r, http.StatusConflict, "CONFLICT")
		if !strings.Contains(string(r.Body), "SCA provider") {
			t.Fatal(r.Body)
		}
	})
}

// R-EACCT-17, R-EACCT-18: new US accounts are validated before payouts.
// Sandbox magic values: account numbers ending 0000 stay PENDING (409
// BANK_ACCOUNT_VALIDATION_PENDING), ending 9999 fail (400
// INVALID_BANK_ACCOUNT); others are VALIDATED. UsableForPayout is what
// payouts ask.
func TestExternalAccounts_BankValidation_R_EACCT_17_18(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		svc := e.eaService()
		tn := e.custTenant()
		cust := e.eaCustomer(t)
		for _, c := range []struct {
			account, status, code string
			httpStatus            int
		}{
			{"1234560000", "PENDING", "BANK_ACCOUNT_VALIDATION_PENDING", http.StatusConflict},
			{"1234569999", "FAILED", "INVALID_BANK_ACCOUNT", http.StatusBadRequest},
			{"1234561234", "VALIDATED", "", 0},
		} {
			a := e.eaCreate(t, eaCustomers, eaUSD(cust, c.account))
			if a["bankAccountValidationStatus"] != c.status {
				t.Fatalf("%s: %v", c.account, a)
			}
			err := svc.UsableForPayout(ctx, tn, a["id"].(string))
			if c.code == "" {
				if err != nil {
					t.Fatalf("%s: %v", c.account, err)
				}
				continue
			}
			ae, ok := apierr.From(err)
			if !ok || ae.Code != c.code || ae.Status != c.httpStatus {
				t.Fatalf("%s: %v", c.account, err)
			}
		}
		// Platform accounts too.
		p := e.eaCreate(t, eaPlatform, eaUSD("", "77770000"))
		if ae, _ := apierr.From(svc.UsableForPayout(ctx, tn, p["id"].(string))); ae == nil || ae.Code != "BANK_ACCOUNT_VALIDATION_PENDING" {
			t.Fatal("platform account")
		}
		// Other types carry no validation status.
		eur := e.eaCreate(t, eaCustomers, cobj{"customerId": cust, "currency": "EUR", "accountInfo": cobj{"accountType": "EUR_ACCOUNT",
			"iban": "DE89370400440532013000", "beneficiary": cwith(eaIndividual(), "countryOfResidence", "DE")}})
		if _, has := eur["bankAccountValidationStatus"]; has || svc.UsableForPayout(ctx, tn, eur["id"].(string)) != nil {
			t.Fatalf("%v", eur)
		}
		// Unknown and other-environment accounts are 404.
		for _, tenant := range []store.Tenant{tn, {PlatformID: e.platformID, Env: store.EnvProduction}} {
			id := eur["id"].(string)
			if tenant == tn {
				id = "ExternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"
			}
			if ae, _ := apierr.From(svc.UsableForPayout(ctx, tenant, id)); ae == nil || ae.Code != "ACCOUNT_NOT_FOUND" || ae.Status != 404 {
				t.Fatalf("%v", ae)
			}
		}
		// Production has no validation provider: new US accounts wait.
		prod := withCreds(e.production)
		pa := e.eaCreate(t, eaCustomers, eaUSD(e.eaCustomer(t, prod), "1234561234"), prod)
		if pa["bankAccountValidationStatus"] != "PENDING" {
			t.Fatalf("%v", pa)
		}
		// An unverified self-custody wallet is not usable either.
		ev := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
		w := e.eaCreate(t, eaCustomers, eaWallet(cust, "ETHEREUM_WALLET", "USDC", "FIRST_PARTY", ev.info...))
		if ae, _ := apierr.From(svc.UsableForPayout(ctx, tn, w["id"].(string))); ae == nil || ae.Code != "EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED" || ae.Status != 400 {
			t.Fatalf("%v", ae)
		}
	})
}
