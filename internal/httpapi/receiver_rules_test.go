package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// The receiver lookup of an external account.
// R-RATE-08: GET /receiver/external-account/{accountId} takes customerId and
// sendingCurrency and answers the lookup result for that sending currency;
// without sendingCurrency a customer holding one currency sends in it.
// R-RATE-10: the result has accountId, lookupId, sendingCurrency,
// supportedCurrencies (array) and requiredPayerDataFields (array).
// R-RATE-11: each supported currency has currency, estimatedExchangeRate,
// min and max (receiving smallest unit) and minSendingAmount and
// maxSendingAmount (sending smallest unit), all integers but the rate.
// R-RATE-12: requiredPayerDataFields items are {name, mandatory}, the
// fields the platform requires for the receiving currency.
func TestReceiver_Lookup_R_RATE_08_R_RATE_10_R_RATE_11_R_RATE_12(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		e.qtWebhook(t)
		expect(t, e.qdo("PATCH", "/config", `{"supportedCurrencies":[`+
			`{"currencyCode":"USD","minAmount":1,"maxAmount":100000000000,"enabledTransactionTypes":["INCOMING","OUTGOING"]},`+
			`{"currencyCode":"EUR","minAmount":1,"maxAmount":100000000000,"enabledTransactionTypes":["INCOMING","OUTGOING"],`+
			`"requiredCounterpartyFields":[{"name":"FULL_NAME","mandatory":true},{"name":"BIRTH_DATE","mandatory":false}]}]}`), http.StatusOK, "")
		a, b := e.qtCustomer(t), e.qtCustomer(t)
		ext := e.eaCreate(t, eaCustomers, cobj{"customerId": b, "currency": "EUR", "accountInfo": cobj{
			"accountType": "EUR_ACCOUNT", "iban": "DE89370400440532013000", "beneficiary": cwith(eaIndividual(), "countryOfResidence", "DE")}},
			jsonBody)["id"].(string)
		lookup := func(query string) (map[string]any, resp) {
			t.Helper()
			r := e.qdo("GET", "/receiver/external-account/"+ext+query, nil)
			expect(t, r, http.StatusOK, "")
			return r.JSON(t), r
		}
		m, r := lookup("?customerId=" + a + "&sendingCurrency=EUR")
		if m["accountId"] != ext || !strings.HasPrefix(m["lookupId"].(string), "Lookup:") || m["sendingCurrency"] != "EUR" {
			t.Fatalf("%s", r.Body)
		}
		sc, _ := m["supportedCurrencies"].([]any)
		if len(sc) != 1 {
			t.Fatalf("supportedCurrencies %v", m["supportedCurrencies"])
		}
		c := sc[0].(map[string]any)
		if c["currency"].(map[string]any)["code"] != "EUR" || c["estimatedExchangeRate"].(float64) != 1 {
			t.Fatalf("EUR to EUR: %v", c)
		}
		for _, f := range []string{"min", "max", "minSendingAmount", "maxSendingAmount"} {
			v, ok := c[f].(float64)
			if !ok || v != float64(int64(v)) || v < 1 {
				t.Fatalf("%s = %v", f, c[f])
			}
		}
		if c["max"].(float64) < c["min"].(float64) || c["maxSendingAmount"].(float64) < c["minSendingAmount"].(float64) {
			t.Fatalf("bounds %v", c)
		}
		fields, _ := m["requiredPayerDataFields"].([]any)
		if len(fields) != 2 {
			t.Fatalf("requiredPayerDataFields %v", m["requiredPayerDataFields"])
		}
		for i, want := range []struct {
			name      string
			mandatory bool
		}{{"FULL_NAME", true}, {"BIRTH_DATE", false}} {
			f := fields[i].(map[string]any)
			if f["name"] != want.name || f["mandatory"] != want.mandatory {
				t.Fatalf("field %d: %v", i, f)
			}
		}
		// Another sending currency prices another rate.
		m, _ = lookup("?customerId=" + a + "&sendingCurrency=USD")
		if m["sendingCurrency"] != "USD" || m["supportedCurrencies"].([]any)[0].(map[string]any)["estimatedExchangeRate"].(float64) == 1 {
			t.Fatalf("USD lookup %v", m)
		}
		// Each lookup is its own.
		m2, _ := lookup("?customerId=" + a + "&sendingCurrency=USD")
		if m2["lookupId"] == m["lookupId"] {
			t.Fatal("two lookups share a lookupId")
		}
		expect(t, e.qdo("GET", "/receiver/external-account/"+ext+"?sendingCurrency=XYZ", nil), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-RATE-14: a quote whose lookupId is unknown is 404
// LOOKUP_REQUEST_NOT_FOUND and changes nothing.
func TestQuotes_UnknownLookup_R_RATE_14(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 10_000)
		e.qtRefusal(t, a, cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
			"destination":        cobj{"destinationType": "UMA_ADDRESS", "umaAddress": "$bob@example.com", "currency": "USD"},
			"lookupId":           "Lookup:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b",
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 1_000}, http.StatusNotFound, "LOOKUP_REQUEST_NOT_FOUND")
	})
}
