package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// Links need an Idempotency-Key, replay under it, never show the secret,
// list with their filters and revoke; stablecoins list with the reference's
// filters.
func TestStablecoinLinksAndLists(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		body := cobj{"provider": "BRALE", "apiClientId": "client-a", "apiClientSecret": "very-secret-value-a"}
		expect(t, e.do("POST", "/stablecoin-provider-accounts", body), http.StatusBadRequest, "INVALID_INPUT")
		key := scKey()
		r1 := e.do("POST", "/stablecoin-provider-accounts", body, key)
		expect(t, r1, http.StatusCreated, "")
		r2 := e.do("POST", "/stablecoin-provider-accounts", body, key)
		expect(t, r2, http.StatusCreated, "")
		a := r1.JSON(t)
		if r2.JSON(t)["id"] != a["id"] || r2.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %s", r2.Body)
		}
		linkID := a["id"].(string)
		get := e.do("GET", "/stablecoin-provider-accounts/"+linkID, nil)
		list := e.do("GET", "/stablecoin-provider-accounts", nil)
		for _, r := range []resp{r1, get, list} {
			if r.Status >= 300 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if strings.Contains(string(r.Body), "very-secret-value-a") || strings.Contains(string(r.Body), "apiClientSecret") {
				t.Fatalf("the secret came back: %s", r.Body)
			}
		}
		if n := list.JSON(t)["totalCount"]; n != float64(1) {
			t.Fatalf("list: %s", list.Body)
		}
		e.scRegister(t, "ACME", "btkn1acme")
		e.scRegister(t, "PENDQ", "btkn1pend")
		for q, n := range map[string]float64{"issuanceStatus=PROVISIONING": 1, "issuanceStatus=PROVISIONED": 1,
			"gridOperationsStatus=NOT_ENABLED": 2, "provider=BRALE": 2, "gridOperationsStatus=ENABLED": 0} {
			r := e.do("GET", "/stablecoins?"+q, nil)
			expect(t, r, http.StatusOK, "")
			if got := r.JSON(t)["totalCount"]; got != n {
				t.Errorf("%s: %v, want %v", q, got, n)
			}
		}
		expect(t, e.do("GET", "/stablecoins?issuanceStatus=DONE", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("GET", "/stablecoins?symbol=ACME", nil), http.StatusBadRequest, "INVALID_INPUT")

		for range 2 { // revoking twice answers the revoked link
			r := e.do("DELETE", "/stablecoin-provider-accounts/"+linkID, nil)
			expect(t, r, http.StatusOK, "")
			if r.JSON(t)["status"] != "REVOKED" {
				t.Fatal(r.Body)
			}
		}
		r := e.do("GET", "/stablecoin-provider-accounts?status=REVOKED", nil)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["totalCount"] != float64(1) {
			t.Fatal(r.Body)
		}
		// With its only link revoked, the platform cannot register.
		r = e.do("POST", "/stablecoins", cobj{"providerTokenIdentifier": "BETA", "networkTokenIdentifier": "btkn1beta", "network": "SPARK"}, scKey())
		expect(t, r, http.StatusBadRequest, "STABLECOIN_PROVIDER_ACCOUNT_REVOKED")
	})
}
