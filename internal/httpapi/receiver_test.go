package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// Receiver lookup of an external account: lookupId `Lookup:<uuid>`, the
// account's currency with an estimated rate and bounds, required payer data;
// unknown account 404; unknown customer 404.
func TestReceiver_ExternalAccountLookup(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		ext := e.eaCreate(t, eaCustomers, cobj{"customerId": b, "currency": "EUR", "accountInfo": cobj{
			"accountType": "EUR_ACCOUNT", "iban": "DE89370400440532013000", "beneficiary": cwith(eaIndividual(), "countryOfResidence", "DE")}})
		id := ext["id"].(string)
		r := e.do("GET", "/receiver/external-account/"+id+"?customerId="+a+"&sendingCurrency=USD", nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if !strings.HasPrefix(m["lookupId"].(string), "Lookup:") || m["accountId"] != id {
			t.Fatalf("%v", m)
		}
		sc := m["supportedCurrencies"].([]any)[0].(map[string]any)
		if sc["currency"].(map[string]any)["code"] != "EUR" || sc["estimatedExchangeRate"].(float64) != 1.08 ||
			sc["min"].(float64) < 1 || sc["max"].(float64) < sc["min"].(float64) {
			t.Fatalf("%v", sc)
		}
		if _, ok := m["requiredPayerDataFields"].([]any); !ok {
			t.Fatalf("requiredPayerDataFields: %v", m)
		}
		expect(t, e.do("GET", "/receiver/external-account/ExternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		expect(t, e.do("GET", "/receiver/external-account/"+id+"?customerId=Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), http.StatusNotFound, "")
	})
}
