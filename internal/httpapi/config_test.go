package httpapi

import (
	"fmt"
	"net/http"
	"testing"
)

// R-TOKCFG-05: GET /config carries cardConfigs, feeConfigs and cardTokenization2faConfig.
func TestConfig_Get_R_TOKCFG_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.do("GET", "/config", nil).JSON(t)
		for _, f := range []string{"id", "supportedCurrencies", "feeConfigs", "cardConfigs", "cardTokenization2faConfig", "createdAt", "updatedAt"} {
			if _, ok := c[f]; !ok {
				t.Errorf("missing %s", f)
			}
		}
		cc := c["cardConfigs"].(map[string]any)
		for _, f := range []string{"pinTargetOrigin", "panRevealCssUrl", "maxSpendPerTransaction", "maxSpendPerDay", "maxTransactionsPerDay"} {
			if _, ok := cc[f]; !ok {
				t.Errorf("missing cardConfigs.%s", f)
			}
		}
	})
}

// R-TOKCFG-06, R-TOKCFG-07: caps set; pinTargetOrigin null clears, omitted preserves.
func TestConfig_CardConfigs_R_TOKCFG_06_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("PATCH", "/config", `{"cardConfigs":{"pinTargetOrigin":"https://app.example.com","maxSpendPerTransaction":50000,"maxSpendPerDay":100000,"maxTransactionsPerDay":10,"panRevealCssUrl":"https://cdn.example.com/pan.css"}}`)
		expect(t, r, http.StatusOK, "")
		cc := e.do("GET", "/config", nil).JSON(t)["cardConfigs"].(map[string]any)
		if cc["pinTargetOrigin"] != "https://app.example.com" || cc["maxSpendPerTransaction"].(float64) != 50000 ||
			cc["maxSpendPerDay"].(float64) != 100000 || cc["maxTransactionsPerDay"].(float64) != 10 {
			t.Fatalf("%v", cc)
		}
		expect(t, e.do("PATCH", "/config", `{"cardConfigs":{"maxSpendPerDay":200000}}`), http.StatusOK, "")
		cc = e.do("GET", "/config", nil).JSON(t)["cardConfigs"].(map[string]any)
		if cc["pinTargetOrigin"] != "https://app.example.com" || cc["maxSpendPerDay"].(float64) != 200000 {
			t.Fatalf("omitted fields must be preserved: %v", cc)
		}
		expect(t, e.do("PATCH", "/config", `{"cardConfigs":{"pinTargetOrigin":null,"maxSpendPerTransaction":null}}`), http.StatusOK, "")
		cc = e.do("GET", "/config", nil).JSON(t)["cardConfigs"].(map[string]any)
		if cc["pinTargetOrigin"] != nil || cc["maxSpendPerTransaction"] != nil || cc["panRevealCssUrl"] == nil {
			t.Fatalf("null clears only the named fields: %v", cc)
		}
	})
}

// R-TOKCFG-08: fee configs merge by (feeType, sourceCurrency); zero deactivates.
func TestConfig_FeeConfigs_R_TOKCFG_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		fee := func(bps, fixed int) string {
			return fmt.Sprintf(`{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":%d,"fixedFee":{"amount":%d,"currency":"USD"}}]}`, bps, fixed)
		}
		expect(t, e.do("PATCH", "/config", fee(30, 100)), http.StatusOK, "")
		expect(t, e.do("PATCH", "/config", fee(45, 100)), http.StatusOK, "")
		fcs := e.do("GET", "/config", nil).JSON(t)["feeConfigs"].([]any)
		if len(fcs) != 1 || fcs[0].(map[string]any)["variableFeeBps"].(float64) != 45 {
			t.Fatalf("merge by key: %v", fcs)
		}
		expect(t, e.do("PATCH", "/config", `{"umaDomain":"pay.example.com"}`), http.StatusOK, "")
		if fcs := e.do("GET", "/config", nil).JSON(t)["feeConfigs"].([]any); len(fcs) != 1 {
			t.Fatal("omitting feeConfigs keeps them")
		}
		expect(t, e.do("PATCH", "/config", fee(0, 0)), http.StatusOK, "")
		if fcs := e.do("GET", "/config", nil).JSON(t)["feeConfigs"].([]any); len(fcs) != 0 {
			t.Fatalf("zero fees deactivate: %v", fcs)
		}
	})
}

func TestConfig_OtherFields(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		body := `{"umaDomain":"pay.example.com","webhookEndpoint":"http://localhost:9000/hooks",
			"supportedCurrencies":[{"currencyCode":"USD","minAmount":100,"maxAmount":500000,"requiredCounterpartyFields":[{"name":"FULL_NAME","mandatory":true}],"enabledTransactionTypes":["OUTGOING"]},
			{"currencyCode":"MXN","minAmount":0,"maxAmount":900000,"enabledTransactionTypes":["INCOMING","OUTGOING"]}],
			"cardTokenization2faConfig":{"displayName":"Acme","email":{"fromAddress":"cards@example.com"},"sms":{"bodyText":"Your code"}}}`
		expect(t, e.do("PATCH", "/config", body), http.StatusOK, "")
		c := e.do("GET", "/config", nil).JSON(t)
		if c["webhookEndpoint"] != "http://localhost:9000/hooks" || len(c["supportedCurrencies"].([]any)) != 2 {
			t.Fatalf("%v", c)
		}
		tok := c["cardTokenization2faConfig"].(map[string]any)
		if tok["displayName"] != "Acme" || tok["email"].(map[string]any)["fromAddress"] != "cards@example.com" {
			t.Fatalf("%v", tok)
		}
		// Nested omitted fields keep their values.
		expect(t, e.do("PATCH", "/config", `{"cardTokenization2faConfig":{"email":{"fromName":"Acme Cards"}}}`), http.StatusOK, "")
		email := e.do("GET", "/config", nil).JSON(t)["cardTokenization2faConfig"].(map[string]any)["email"].(map[string]any)
		if email["fromAddress"] != "cards@example.com" || email["fromName"] != "Acme Cards" {
			t.Fatalf("%v", email)
		}
		expect(t, e.do("PATCH", "/config", `{"webhookEndpoint":null}`), http.StatusOK, "")
		if _, set := e.do("GET", "/config", nil).JSON(t)["webhookEndpoint"]; set {
			t.Fatal("null clears webhookEndpoint")
		}
	})
}

// Configuration is validated like any other input: every bad field listed,
// nothing changed.
func TestConfig_Validation(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		before := e.snapshot()
		body := `{"umaDomain":"Not A Domain","webhookEndpoint":"ftp://x",
			"supportedCurrencies":[{"currencyCode":"XYZ","minAmount":-1,"maxAmount":0,"enabledTransactionTypes":["SIDEWAYS"]},{"currencyCode":"USD"}],
			"feeConfigs":[{"feeType":"FLAT","sourceCurrency":"EUR","variableFeeBps":10001,"fixedFee":{"amount":-1,"currency":"ZZZ"}}],
			"cardConfigs":{"pinTargetOrigin":"https://app.example.com/path","maxSpendPerDay":0,"panRevealCssUrl":"http://insecure/x.css"},
			"cardTokenization2faConfig":{"logoUrl":"http://x/logo.png","email":{"fromAddress":"not-an-email"},"sms":{"templateSid":"` + fmt.Sprintf("%065d", 0) + `"}}}`
		r := e.do("PATCH", "/config", body)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		got := fieldErrors(t, r)
		want := map[string]string{
			"umaDomain": "format", "webhookEndpoint": "format",
			"supportedCurrencies[0].currencyCode": "enum", "supportedCurrencies[0].minAmount": "minimum",
			"supportedCurrencies[0].maxAmount": "minimum", "supportedCurrencies[0].enabledTransactionTypes[0]": "enum",
			"supportedCurrencies[1].minAmount": "required", "supportedCurrencies[1].maxAmount": "required",
			"supportedCurrencies[1].enabledTransactionTypes": "required",
			"feeConfigs[0].feeType":                          "enum", "feeConfigs[0].sourceCurrency": "enum", "feeConfigs[0].variableFeeBps": "maximum",
			"feeConfigs[0].fixedFee.amount": "minimum", "feeConfigs[0].fixedFee.currency": "enum",
			"cardConfigs.pinTargetOrigin": "format", "cardConfigs.maxSpendPerDay": "minimum", "cardConfigs.panRevealCssUrl": "format",
			"cardTokenization2faConfig.logoUrl": "format", "cardTokenization2faConfig.email.fromAddress": "format",
			"cardTokenization2faConfig.sms.templateSid": "maxLength",
		}
		for f, c := range want {
			if got[f] != c {
				t.Errorf("%s: got %q want %q", f, got[f], c)
			}
		}
		if len(got) != len(want) {
			t.Errorf("got %d errors, want %d: %v", len(got), len(want), got)
		}
		// Unknown and mistyped fields are listed together with rule failures.
		r = e.do("PATCH", "/config", `{"cardConfigs":{"maxSpendPerDay":"lots","bogus":1},"umaDomain":"bad domain"}`)
		got = fieldErrors(t, r)
		if got["cardConfigs.maxSpendPerDay"] != "type" || got["cardConfigs.bogus"] != "additionalProperties" || got["umaDomain"] != "format" {
			t.Fatalf("%v", got)
		}
		// A transaction type listed twice is refused, naming the repeat.
		r = e.do("PATCH", "/config", `{"supportedCurrencies":[{"currencyCode":"USD","minAmount":1,"maxAmount":100,
			"requiredCounterpartyFields":[],"enabledTransactionTypes":["OUTGOING","OUTGOING"]}]}`)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if got = fieldErrors(t, r); len(got) != 1 || got["supportedCurrencies[0].enabledTransactionTypes[1]"] != "uniqueItems" {
			t.Fatalf("%v", got)
		}
		if e.snapshot() != before {
			t.Fatal("an invalid PATCH changed the configuration")
		}
	})
}

// Production webhook endpoints must be https; sandbox may use any address.
func TestConfig_ProductionWebhookNeedsHTTPS(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("PATCH", "/config", `{"webhookEndpoint":"http://hooks.example.com/x"}`, withCreds(e.production))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/config", `{"webhookEndpoint":"https://hooks.example.com/x"}`, withCreds(e.production)), http.StatusOK, "")
		expect(t, e.do("PATCH", "/config", `{"webhookEndpoint":"http://127.0.0.1:9000/x"}`), http.StatusOK, "")
	})
}
