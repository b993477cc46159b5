package platformconfig_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func patch(t *testing.T, body string) platformconfig.Patch {
	t.Helper()
	var p platformconfig.Patch
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return p
}

func fieldsOf(err error) map[string]string {
	out := map[string]string{}
	for _, fe := range apierr.FieldList(err) {
		out[fe.Field] = fe.Constraint
	}
	return out
}

func TestValidate_EveryInvalidField(t *testing.T) {
	long := "https://x.example.com/" + strings.Repeat("a", 2048)
	cases := []struct {
		env, body string
		want      map[string]string
	}{
		{store.EnvSandbox, `{"umaDomain":"Example.COM","webhookEndpoint":"ftp://x.example.com"}`,
			map[string]string{"umaDomain": apierr.Format, "webhookEndpoint": apierr.Format}},
		{store.EnvProduction, `{"webhookEndpoint":"http://hooks.example.com/x"}`, map[string]string{"webhookEndpoint": apierr.Format}},
		{store.EnvSandbox, `{"webhookEndpoint":"` + long + `"}`, map[string]string{"webhookEndpoint": apierr.MaxLength}},
		{store.EnvSandbox, `{"webhookEndpoint":"/relative"}`, map[string]string{"webhookEndpoint": apierr.Format}},
		{store.EnvSandbox, `{"supportedCurrencies":[]}`, map[string]string{"supportedCurrencies": apierr.MinLength}},
		{store.EnvSandbox, `{"supportedCurrencies":[{"currencyCode":"XXX","minAmount":-1,"maxAmount":0,"enabledTransactionTypes":["SIDEWAYS"],
			"requiredCounterpartyFields":[{"name":"SHOE_SIZE","mandatory":true}]},{"minAmount":5,"maxAmount":4,"enabledTransactionTypes":[]}]}`,
			map[string]string{"supportedCurrencies[0].currencyCode": apierr.Enum, "supportedCurrencies[0].minAmount": apierr.Minimum,
				"supportedCurrencies[0].maxAmount": apierr.Minimum, "supportedCurrencies[0].enabledTransactionTypes[0]": apierr.Enum,
				"supportedCurrencies[0].requiredCounterpartyFields[0].name": apierr.Enum,
				"supportedCurrencies[1].currencyCode":                       apierr.Required, "supportedCurrencies[1].maxAmount": apierr.Minimum,
				"supportedCurrencies[1].enabledTransactionTypes": apierr.Required}},
		{store.EnvSandbox, `{"supportedCurrencies":[{"currencyCode":"USD","minAmount":1,"maxAmount":2,"enabledTransactionTypes":["INCOMING"]},
			{"currencyCode":"USD","enabledTransactionTypes":["OUTGOING"]}]}`,
			map[string]string{"supportedCurrencies[1].currencyCode": apierr.UniqueItems, "supportedCurrencies[1].minAmount": apierr.Required,
				"supportedCurrencies[1].maxAmount": apierr.Required}},
		// A type or counterparty field listed twice is refused, not kept
		// twice or merged.
		{store.EnvSandbox, `{"supportedCurrencies":[{"currencyCode":"USD","minAmount":1,"maxAmount":2,
			"enabledTransactionTypes":["INCOMING","OUTGOING","INCOMING"],
			"requiredCounterpartyFields":[{"name":"FULL_NAME","mandatory":true},{"name":"FULL_NAME","mandatory":false}]}]}`,
			map[string]string{"supportedCurrencies[0].enabledTransactionTypes[2]": apierr.UniqueItems,
				"supportedCurrencies[0].requiredCounterpartyFields[1].name": apierr.UniqueItems}},
		{store.EnvSandbox, `{"feeConfigs":[{"feeType":"OTHER","sourceCurrency":"EUR","variableFeeBps":10001,"fixedFee":{"amount":-1,"currency":"ZZZ"}},{}]}`,
			map[string]string{"feeConfigs[0].feeType": apierr.Enum, "feeConfigs[0].sourceCurrency": apierr.Enum,
				"feeConfigs[0].variableFeeBps": apierr.Maximum, "feeConfigs[0].fixedFee.amount": apierr.Minimum,
				"feeConfigs[0].fixedFee.currency": apierr.Enum, "feeConfigs[1].feeType": apierr.Required,
				"feeConfigs[1].sourceCurrency": apierr.Required, "feeConfigs[1].variableFeeBps": apierr.Required,
				"feeConfigs[1].fixedFee": apierr.Required}},
		{store.EnvSandbox, `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":1,"fixedFee":{}},
			{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":-1,"fixedFee":{"amount":0,"currency":"USD"}}]}`,
			map[string]string{"feeConfigs[0].fixedFee.amount": apierr.Required, "feeConfigs[0].fixedFee.currency": apierr.Required,
				"feeConfigs[1].feeType": apierr.UniqueItems, "feeConfigs[1].variableFeeBps": apierr.Maximum}},
		{store.EnvSandbox, `{"cardConfigs":{"pinTargetOrigin":"https://app.example.com/path","panRevealCssUrl":"http://x.example.com/a.css",
			"maxSpendPerTransaction":0,"maxSpendPerDay":-5,"maxTransactionsPerDay":0}}`,
			map[string]string{"cardConfigs.pinTargetOrigin": apierr.Format, "cardConfigs.panRevealCssUrl": apierr.Format,
				"cardConfigs.maxSpendPerTransaction": apierr.Minimum, "cardConfigs.maxSpendPerDay": apierr.Minimum,
				"cardConfigs.maxTransactionsPerDay": apierr.Minimum}},
		{store.EnvSandbox, `{"cardConfigs":{"pinTargetOrigin":"https://app.example.com/"}}`,
			map[string]string{"cardConfigs.pinTargetOrigin": apierr.Format}},
		{store.EnvProduction, `{"skipVerificationPaperwork":true}`, map[string]string{"skipVerificationPaperwork": apierr.Enum}},
		{store.EnvSandbox, `{"cardTokenization2faConfig":{"displayName":"` + strings.Repeat("é", 256) + `","logoUrl":"http://x.example.com/l.png",
			"email":{"fromAddress":"Cards <cards@example.com>","replyToAddress":"nope","bodyText":"` + strings.Repeat("b", 2001) + `"},
			"sms":{"templateSid":"` + strings.Repeat("s", 65) + `","bodyText":"` + strings.Repeat("b", 481) + `"}}}`,
			map[string]string{"cardTokenization2faConfig.displayName": apierr.MaxLength, "cardTokenization2faConfig.logoUrl": apierr.Format,
				"cardTokenization2faConfig.email.fromAddress": apierr.Format, "cardTokenization2faConfig.email.replyToAddress": apierr.Format,
				"cardTokenization2faConfig.email.bodyText": apierr.MaxLength, "cardTokenization2faConfig.sms.templateSid": apierr.MaxLength,
				"cardTokenization2faConfig.sms.bodyText": apierr.MaxLength}},
		{store.EnvSandbox, `{"cardTokenization2faConfig":{"logoUrl":"https://x.example.com/` + strings.Repeat("l", 500) + `"}}`,
			map[string]string{"cardTokenization2faConfig.logoUrl": apierr.MaxLength}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			err := patch(t, c.body).Validate(c.env)
			if e, ok := apierr.From(err); !ok || e.Status != 400 || e.Code != apierr.CodeInvalidInput {
				t.Fatalf("got %v", err)
			}
			got := fieldsOf(err)
			if len(got) != len(c.want) {
				t.Fatalf("fields %v\nwant   %v", got, c.want)
			}
			for f, con := range c.want {
				if got[f] != con {
					t.Fatalf("fields %v\nwant   %v", got, c.want)
				}
			}
		})
	}
}

func TestValidate_Accepts(t *testing.T) {
	cases := []struct{ env, body string }{
		{store.EnvSandbox, `{}`},
		{store.EnvSandbox, `{"webhookEndpoint":"http://127.0.0.1:8080/hooks","skipVerificationPaperwork":true}`},
		{store.EnvProduction, `{"webhookEndpoint":"https://hooks.example.com/x","umaDomain":"pay.example.com","skipVerificationPaperwork":false}`},
		{store.EnvProduction, `{"webhookEndpoint":null,"umaDomain":null,"cardConfigs":{"maxSpendPerDay":null,"pinTargetOrigin":"https://app.example.com"}}`},
		{store.EnvProduction, `{"cardTokenization2faConfig":{"displayName":"` + strings.Repeat("é", 255) + `","email":{"fromAddress":"cards@example.com"}}}`},
		{store.EnvProduction, `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":10000,"fixedFee":{"amount":0,"currency":"EUR"}}]}`},
	}
	for _, c := range cases {
		if err := patch(t, c.body).Validate(c.env); err != nil {
			t.Errorf("%s %s: %v", c.env, c.body, err)
		}
	}
}

type fixture struct {
	db  *store.DB
	svc *platformconfig.Service
	sbx store.Tenant
	prd store.Tenant
}

func newFixture(t *testing.T, db *store.DB) fixture {
	t.Helper()
	c, err := platforms.Create(context.Background(), db, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db, svc: &platformconfig.Service{DB: db},
		sbx: store.Tenant{PlatformID: c.PlatformID, Env: store.EnvSandbox},
		prd: store.Tenant{PlatformID: c.PlatformID, Env: store.EnvProduction}}
}

func (f fixture) update(t *testing.T, tn store.Tenant, body string) platformconfig.Config {
	t.Helper()
	cfg, err := f.svc.Update(context.Background(), tn, patch(t, body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return cfg
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestProvision_Defaults(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		cfg, err := f.svc.Get(context.Background(), f.sbx)
		if err != nil {
			t.Fatal(err)
		}
		usd := cfg.SupportedCurrencies
		if !strings.HasPrefix(cfg.ID, "PlatformConfig:") || len(usd) != 1 || usd[0].CurrencyCode != "USD" || usd[0].MinAmount != 1 ||
			len(usd[0].EnabledTransactionTypes) != 2 || usd[0].RequiredCounterpartyFields == nil || cfg.FeeConfigs == nil ||
			len(cfg.FeeConfigs) != 0 || cfg.WebhookEndpoint != nil || cfg.UmaDomain != nil || cfg.SkipVerificationPaperwork ||
			cfg.CardConfigs.MaxSpendPerDay != nil || !cfg.CreatedAt.Equal(cfg.UpdatedAt) {
			t.Fatalf("default config %+v", cfg)
		}
		prod, err := f.svc.Get(context.Background(), f.prd)
		if err != nil || prod.ID == cfg.ID {
			t.Fatalf("each environment has its own configuration: %v", err)
		}
		if _, err := f.svc.Get(context.Background(), store.Tenant{PlatformID: "Platform:none", Env: store.EnvSandbox}); err == nil {
			t.Fatal("a tenant without configuration has none")
		}
	})
}

// Get reuses its parse of a stored document while the document is the
// same: what one caller does to its Config's lists does not reach the next
// caller, and a change made through another Service (another node) shows.
func TestGet_ReusedParseIsNotShared(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		f.update(t, f.sbx, `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":25,"fixedFee":{"amount":100,"currency":"USD"}}]}`)
		first, err := f.svc.Get(ctx, f.sbx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(first)
		first.SupportedCurrencies[0].CurrencyCode = "XXX"
		first.FeeConfigs[0].VariableFeeBps = 9999
		first.FeeConfigs = append(first.FeeConfigs, first.FeeConfigs[0])
		again, err := f.svc.Get(ctx, f.sbx)
		got, _ := json.Marshal(again)
		if err != nil || string(got) != string(want) {
			t.Fatalf("a caller's change reached the next Get:\n%s\n%s", got, want)
		}
		other := &platformconfig.Service{DB: db}
		if _, err := other.Update(ctx, f.sbx, patch(t, `{"umaDomain":"other.example.com"}`)); err != nil {
			t.Fatal(err)
		}
		if cfg, err := f.svc.Get(ctx, f.sbx); err != nil || str(cfg.UmaDomain) != "other.example.com" {
			t.Fatalf("another Service's change is not seen: %v %+v", err, cfg)
		}
	})
}

// WebhookEndpoint shares Get's parse: it answers the endpoint of the row it
// is given, the tenant's last parse reused only while the bytes are the same.
func TestWebhookEndpoint_FollowsTheStoredBytes(t *testing.T) {
	tn := store.Tenant{PlatformID: "Platform:endpoint-test", Env: store.EnvSandbox}
	row := func(doc string) store.PlatformConfig { return store.PlatformConfig{Tenant: tn, Document: []byte(doc)} }
	for _, c := range []struct{ doc, want string }{
		{`{"webhookEndpoint":"https://a.example.com/h"}`, "https://a.example.com/h"},
		{`{"webhookEndpoint":"https://a.example.com/h"}`, "https://a.example.com/h"},
		{`{"webhookEndpoint":"https://b.example.com/h"}`, "https://b.example.com/h"},
		{`{}`, "<nil>"},
		{`{"webhookEndpoint":"https://a.example.com/h"}`, "https://a.example.com/h"},
	} {
		ep, err := platformconfig.WebhookEndpoint(row(c.doc))
		if err != nil || str(ep) != c.want {
			t.Fatalf("%s: %s, %v; want %s", c.doc, str(ep), err, c.want)
		}
	}
	if _, err := platformconfig.WebhookEndpoint(row(`{`)); err == nil {
		t.Fatal("a stored document that is not JSON answered")
	}
}

// R-TOKCFG-07 at the service: omitted fields are kept, null clears, a value
// replaces; a refused patch changes nothing; each environment is separate.
func TestUpdate_PatchSemantics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		before, _ := f.svc.Get(ctx, f.sbx)
		cfg := f.update(t, f.sbx, `{"webhookEndpoint":"https://hooks.example.com/a","umaDomain":"pay.example.com",
			"cardConfigs":{"maxSpendPerDay":500,"pinTargetOrigin":"https://app.example.com"},
			"cardTokenization2faConfig":{"displayName":"Acme","email":{"fromAddress":"cards@example.com","subject":"Code"}}}`)
		if str(cfg.WebhookEndpoint) != "https://hooks.example.com/a" || str(cfg.UmaDomain) != "pay.example.com" ||
			*cfg.CardConfigs.MaxSpendPerDay != 500 || str(cfg.CardTokenization2faConfig.Email.Subject) != "Code" ||
			cfg.UpdatedAt.Before(before.UpdatedAt) || !cfg.CreatedAt.Equal(before.CreatedAt) || cfg.ID != before.ID {
			t.Fatalf("after first patch %+v", cfg)
		}
		cfg = f.update(t, f.sbx, `{"umaDomain":null,"cardConfigs":{"pinTargetOrigin":null},
			"cardTokenization2faConfig":{"email":{"subject":"New code"}}}`)
		if str(cfg.WebhookEndpoint) != "https://hooks.example.com/a" || cfg.UmaDomain != nil ||
			cfg.CardConfigs.PinTargetOrigin != nil || cfg.CardConfigs.MaxSpendPerDay == nil ||
			str(cfg.CardTokenization2faConfig.Email.FromAddress) != "cards@example.com" ||
			str(cfg.CardTokenization2faConfig.Email.Subject) != "New code" || str(cfg.CardTokenization2faConfig.DisplayName) != "Acme" {
			t.Fatalf("after second patch %+v", cfg)
		}
		got, err := f.svc.Get(ctx, f.sbx)
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(cfg)
		if err != nil || string(a) != string(b) {
			t.Fatalf("Get after Update:\n%s\n%s", a, b)
		}
		if _, err := f.svc.Update(ctx, f.sbx, patch(t, `{"webhookEndpoint":null,"umaDomain":"BAD"}`)); err == nil {
			t.Fatal("an invalid patch was applied")
		}
		after, _ := f.svc.Get(ctx, f.sbx)
		c, _ := json.Marshal(after)
		if string(c) != string(b) {
			t.Fatalf("a refused patch changed the configuration:\n%s\n%s", c, b)
		}
		if prod, _ := f.svc.Get(ctx, f.prd); prod.WebhookEndpoint != nil || prod.CardConfigs.MaxSpendPerDay != nil {
			t.Fatal("a sandbox patch changed production")
		}
	})
}

func TestUpdate_CurrenciesReplaceFeesMerge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		cfg := f.update(t, f.sbx, `{"supportedCurrencies":[{"currencyCode":"EUR","minAmount":0,"maxAmount":10,"enabledTransactionTypes":["OUTGOING"]}]}`)
		if len(cfg.SupportedCurrencies) != 1 || cfg.SupportedCurrencies[0].CurrencyCode != "EUR" ||
			cfg.SupportedCurrencies[0].RequiredCounterpartyFields == nil {
			t.Fatalf("currencies %+v", cfg.SupportedCurrencies)
		}
		const fee = `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":%d,"fixedFee":{"amount":%d,"currency":"USD"}}]}`
		cfg = f.update(t, f.sbx, fmt.Sprintf(fee, 25, 100))
		cfg = f.update(t, f.sbx, fmt.Sprintf(fee, 30, 0))
		if len(cfg.FeeConfigs) != 1 || cfg.FeeConfigs[0].VariableFeeBps != 30 || cfg.FeeConfigs[0].FixedFee.Amount != 0 {
			t.Fatalf("a fee for the same (feeType, sourceCurrency) replaces the old one: %+v", cfg.FeeConfigs)
		}
		cfg = f.update(t, f.sbx, `{"umaDomain":"x.example.com"}`)
		if len(cfg.FeeConfigs) != 1 || cfg.SupportedCurrencies[0].CurrencyCode != "EUR" {
			t.Fatal("an omitted list is kept")
		}
		cfg = f.update(t, f.sbx, fmt.Sprintf(fee, 0, 0))
		if len(cfg.FeeConfigs) != 0 {
			t.Fatalf("a zero fee deactivates the entry: %+v", cfg.FeeConfigs)
		}
	})
}

func TestUpdate_SkipVerificationPaperworkSandboxOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		if _, err := f.svc.Update(ctx, f.prd, patch(t, `{"skipVerificationPaperwork":true}`)); err == nil {
			t.Fatal("production accepted skipVerificationPaperwork")
		}
		f.update(t, f.sbx, `{"skipVerificationPaperwork":true}`)
		for tn, want := range map[store.Tenant]bool{f.sbx: true, f.prd: false} {
			got, err := platformconfig.SkipsVerificationPaperwork(ctx, db.Read(), tn)
			if err != nil || got != want {
				t.Fatalf("%s: %v %v", tn.Env, got, err)
			}
		}
		if cfg := f.update(t, f.sbx, `{"skipVerificationPaperwork":false}`); cfg.SkipVerificationPaperwork {
			t.Fatal("turned off again")
		}
	})
}

// Concurrent patches of different fields all survive: the read-modify-write
// of the document is serialised, so no update is lost.
func TestUpdate_ConcurrentPatchesLoseNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		bodies := []string{
			`{"webhookEndpoint":"https://hooks.example.com/w"}`,
			`{"umaDomain":"pay.example.com"}`,
			`{"cardConfigs":{"maxSpendPerTransaction":11}}`,
			`{"cardConfigs":{"maxSpendPerDay":22}}`,
			`{"cardConfigs":{"maxTransactionsPerDay":33}}`,
			`{"cardTokenization2faConfig":{"displayName":"Acme"}}`,
			`{"skipVerificationPaperwork":true}`,
			`{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":7,"fixedFee":{"amount":1,"currency":"USD"}}]}`,
		}
		var wg sync.WaitGroup
		for _, b := range bodies {
			p := patch(t, b)
			wg.Go(func() {
				if _, err := f.svc.Update(ctx, f.sbx, p); err != nil {
					t.Errorf("%s: %v", b, err)
				}
			})
		}
		wg.Wait()
		cfg, err := f.svc.Get(ctx, f.sbx)
		cc := cfg.CardConfigs
		if err != nil || cfg.WebhookEndpoint == nil || cfg.UmaDomain == nil || cc.MaxSpendPerTransaction == nil ||
			cc.MaxSpendPerDay == nil || cc.MaxTransactionsPerDay == nil || cfg.CardTokenization2faConfig.DisplayName == nil ||
			!cfg.SkipVerificationPaperwork || len(cfg.FeeConfigs) != 1 {
			b, _ := json.Marshal(cfg)
			t.Fatalf("an update was lost: %s (%v)", b, err)
		}
	})
}
