package platformconfig

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Patch is the body of PATCH /config. Omitted fields are left as they are;
// for nullable fields an explicit null clears the value (R-TOKCFG-07).
type Patch struct {
	UmaDomain                 jsonx.Optional[string] `json:"umaDomain"`
	WebhookEndpoint           jsonx.Optional[string] `json:"webhookEndpoint"`
	SupportedCurrencies       *[]CurrencyInput       `json:"supportedCurrencies"`
	FeeConfigs                *[]FeeInput            `json:"feeConfigs"`
	CardConfigs               *CardConfigsPatch      `json:"cardConfigs"`
	CardTokenization2faConfig *Tokenization2FAPatch  `json:"cardTokenization2faConfig"`
	SkipVerificationPaperwork *bool                  `json:"skipVerificationPaperwork"`
	EmbeddedWalletConfig      *EmbeddedWalletPatch   `json:"embeddedWalletConfig"`
}

// CurrencyInput is one entry of supportedCurrencies as sent.
type CurrencyInput struct {
	CurrencyCode               *string             `json:"currencyCode"`
	MinAmount                  *int64              `json:"minAmount"`
	MaxAmount                  *int64              `json:"maxAmount"`
	RequiredCounterpartyFields []CounterpartyField `json:"requiredCounterpartyFields"`
	EnabledTransactionTypes    []string            `json:"enabledTransactionTypes"`
}

// FeeInput is one entry of feeConfigs as sent.
type FeeInput struct {
	FeeType        *string        `json:"feeType"`
	SourceCurrency *string        `json:"sourceCurrency"`
	VariableFeeBps *int64         `json:"variableFeeBps"`
	FixedFee       *FixedFeeInput `json:"fixedFee"`
}

// FixedFeeInput is a fixed fee as sent.
type FixedFeeInput struct {
	Amount   *int64  `json:"amount"`
	Currency *string `json:"currency"`
}

// CardConfigsPatch changes card settings field by field.
type CardConfigsPatch struct {
	PinTargetOrigin        jsonx.Optional[string]   `json:"pinTargetOrigin"`
	PanRevealCssUrl        jsonx.Optional[string]   `json:"panRevealCssUrl"`
	MaxSpendPerTransaction jsonx.Optional[int64]    `json:"maxSpendPerTransaction"`
	MaxSpendPerDay         jsonx.Optional[int64]    `json:"maxSpendPerDay"`
	MaxTransactionsPerDay  jsonx.Optional[int64]    `json:"maxTransactionsPerDay"`
	AgentBlockedMccs       jsonx.Optional[[]string] `json:"agentBlockedMccs"`
}

// Tokenization2FAPatch changes tokenization messaging field by field.
type Tokenization2FAPatch struct {
	DisplayName jsonx.Optional[string] `json:"displayName"`
	LogoUrl     jsonx.Optional[string] `json:"logoUrl"`
	Email       *struct {
		FromAddress    jsonx.Optional[string] `json:"fromAddress"`
		FromName       jsonx.Optional[string] `json:"fromName"`
		ReplyToAddress jsonx.Optional[string] `json:"replyToAddress"`
		Subject        jsonx.Optional[string] `json:"subject"`
		BodyText       jsonx.Optional[string] `json:"bodyText"`
	} `json:"email"`
	Sms *struct {
		TemplateSid jsonx.Optional[string] `json:"templateSid"`
		BodyText    jsonx.Optional[string] `json:"bodyText"`
	} `json:"sms"`
}

// Enumerations and bounds.
var (
	TransactionTypes    = []string{"INCOMING", "OUTGOING"}
	FeeTypes            = []string{"CROSS_CURRENCY_TRANSACTION"}
	FeeSourceCurrencies = []string{"USD"}
	CounterpartyFields  = []string{"FULL_NAME", "BIRTH_DATE", "NATIONALITY", "PHONE_NUMBER", "EMAIL",
		"POSTAL_ADDRESS", "TAX_ID", "REGISTRATION_NUMBER", "USER_TYPE", "COUNTRY_OF_RESIDENCE",
		"ACCOUNT_IDENTIFIER", "FI_LEGAL_ENTITY_NAME", "FI_ADDRESS", "PURPOSE_OF_PAYMENT",
		"ULTIMATE_INSTITUTION_COUNTRY", "IDENTIFIER", "BUSINESS_TYPE", "COMPANY_LEGAL_NAME", "ID_TYPE", "ID_NUMBER"}
	// loopbackDomainRE: a sandbox installation on this host (two
	// installations paying each other over UMA on loopback).
	loopbackDomainRE = regexp.MustCompile(`^(?:localhost|127\.0\.0\.1):[0-9]{1,5}$`)
	hostnameRE       = regexp.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
)

const maxURLLength = 2048

// Validate lists every invalid field of p; env decides whether a plain-http
// webhook endpoint is acceptable (sandbox only).
func (p Patch) Validate(env string) error {
	var f apierr.Fields
	if v := p.UmaDomain.Ptr(); v != nil && (len(*v) > 253 || !hostnameRE.MatchString(*v)) &&
		(env == store.EnvProduction || !loopbackDomainRE.MatchString(*v)) {
		f.Add("umaDomain", apierr.Format, "must be a lowercase domain name such as example.com (in sandbox also a loopback host with a port, such as 127.0.0.1:8081)")
	}
	if v := p.WebhookEndpoint.Ptr(); v != nil {
		checkURL(&f, "webhookEndpoint", *v, env == store.EnvProduction)
	}
	if p.SupportedCurrencies != nil {
		validateCurrencies(&f, *p.SupportedCurrencies)
	}
	if p.FeeConfigs != nil {
		validateFees(&f, *p.FeeConfigs)
	}
	if c := p.CardConfigs; c != nil {
		if v := c.PinTargetOrigin.Ptr(); v != nil && !isHTTPSOrigin(*v) {
			f.Add("cardConfigs.pinTargetOrigin", apierr.Format, "must be an https origin such as https://app.example.com (no path)")
		}
		if v := c.PanRevealCssUrl.Ptr(); v != nil {
			checkURL(&f, "cardConfigs.panRevealCssUrl", *v, true)
		}
		for name, o := range map[string]jsonx.Optional[int64]{
			"maxSpendPerTransaction": c.MaxSpendPerTransaction, "maxSpendPerDay": c.MaxSpendPerDay,
			"maxTransactionsPerDay": c.MaxTransactionsPerDay,
		} {
			if v := o.Ptr(); v != nil && *v < 1 {
				f.Add("cardConfigs."+name, apierr.Minimum, "must be a positive integer, or null for no cap")
			}
		}
		checkMCCs(&f, "cardConfigs.agentBlockedMccs", c.AgentBlockedMccs.Value)
	}
	if p.SkipVerificationPaperwork != nil && *p.SkipVerificationPaperwork && env != store.EnvSandbox {
		f.Add("skipVerificationPaperwork", apierr.Enum, "can be turned on in sandbox only; production verification always needs the paperwork")
	}
	if t := p.CardTokenization2faConfig; t != nil {
		maxLen(&f, "cardTokenization2faConfig.displayName", t.DisplayName, 255)
		if v := t.LogoUrl.Ptr(); v != nil {
			if len(*v) > 512 {
				f.Add("cardTokenization2faConfig.logoUrl", apierr.MaxLength, "must be at most 512 characters")
			} else {
				checkURL(&f, "cardTokenization2faConfig.logoUrl", *v, true)
			}
		}
		if e := t.Email; e != nil {
			const pre = "cardTokenization2faConfig.email."
			for name, o := range map[string]jsonx.Optional[string]{"fromAddress": e.FromAddress, "replyToAddress": e.ReplyToAddress} {
				if v := o.Ptr(); v != nil {
					if len(*v) > 255 {
						f.Add(pre+name, apierr.MaxLength, "must be at most 255 characters")
					} else if a, err := mail.ParseAddress(*v); err != nil || a.Address != *v {
						f.Add(pre+name, apierr.Format, "must be an email address such as cards@example.com")
					}
				}
			}
			maxLen(&f, pre+"fromName", e.FromName, 255)
			maxLen(&f, pre+"subject", e.Subject, 255)
			maxLen(&f, pre+"bodyText", e.BodyText, 2000)
		}
		if s := t.Sms; s != nil {
			maxLen(&f, "cardTokenization2faConfig.sms.templateSid", s.TemplateSid, 64)
			maxLen(&f, "cardTokenization2faConfig.sms.bodyText", s.BodyText, 480)
		}
	}
	if p.EmbeddedWalletConfig != nil {
		p.EmbeddedWalletConfig.validate(&f, env)
	}
	return f.Err()
}

func maxLen(f *apierr.Fields, field string, o jsonx.Optional[string], n int) {
	if v := o.Ptr(); v != nil && utf8.RuneCountInString(*v) > n {
		f.Add(field, apierr.MaxLength, "must be at most %d characters", n)
	}
}

func checkURL(f *apierr.Fields, field, raw string, httpsOnly bool) {
	if len(raw) > maxURLLength {
		f.Add(field, apierr.MaxLength, "must be at most %d characters", maxURLLength)
		return
	}
	u, err := url.Parse(raw)
	ok := err == nil && u.IsAbs() && u.Host != "" && (u.Scheme == "https" || (!httpsOnly && u.Scheme == "http"))
	if !ok {
		if httpsOnly {
			f.Add(field, apierr.Format, "must be an absolute https URL")
		} else {
			f.Add(field, apierr.Format, "must be an absolute http or https URL")
		}
	}
}

func isHTTPSOrigin(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil &&
		(u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !strings.HasSuffix(raw, "/")
}

func validateCurrencies(f *apierr.Fields, list []CurrencyInput) {
	if len(list) == 0 {
		f.Add("supportedCurrencies", apierr.MinLength, "must list at least one currency")
	}
	seen := map[string]bool{}
	for i, c := range list {
		at := func(k string) string { return fmt.Sprintf("supportedCurrencies[%d].%s", i, k) }
		switch {
		case c.CurrencyCode == nil:
			f.Add(at("currencyCode"), apierr.Required, "is required")
		case !known(*c.CurrencyCode):
			f.Add(at("currencyCode"), apierr.Enum, "is not a supported currency (one of %s)", strings.Join(currency.Codes(), ", "))
		case seen[*c.CurrencyCode]:
			f.Add(at("currencyCode"), apierr.UniqueItems, "%s is listed twice", *c.CurrencyCode)
		default:
			seen[*c.CurrencyCode] = true
		}
		if c.MinAmount == nil {
			f.Add(at("minAmount"), apierr.Required, "is required")
		} else if *c.MinAmount < 0 {
			f.Add(at("minAmount"), apierr.Minimum, "must be at least 0")
		}
		if c.MaxAmount == nil {
			f.Add(at("maxAmount"), apierr.Required, "is required")
		} else if *c.MaxAmount < 1 || (c.MinAmount != nil && *c.MaxAmount < *c.MinAmount) {
			f.Add(at("maxAmount"), apierr.Minimum, "must be positive and at least minAmount")
		}
		if len(c.EnabledTransactionTypes) == 0 {
			f.Add(at("enabledTransactionTypes"), apierr.Required, "must list INCOMING, OUTGOING or both")
		}
		for j, tt := range c.EnabledTransactionTypes {
			switch at := fmt.Sprintf("%s[%d]", at("enabledTransactionTypes"), j); {
			case !slices.Contains(TransactionTypes, tt):
				f.Add(at, apierr.Enum, "must be one of %s", strings.Join(TransactionTypes, ", "))
			case slices.Contains(c.EnabledTransactionTypes[:j], tt):
				f.Add(at, apierr.UniqueItems, "%s is listed twice", tt)
			}
		}
		for j, cf := range c.RequiredCounterpartyFields {
			switch at := fmt.Sprintf("%s[%d].name", at("requiredCounterpartyFields"), j); {
			case !slices.Contains(CounterpartyFields, cf.Name):
				f.Add(at, apierr.Enum, "must be one of %s", strings.Join(CounterpartyFields, ", "))
			case slices.ContainsFunc(c.RequiredCounterpartyFields[:j], func(o CounterpartyField) bool { return o.Name == cf.Name }):
				f.Add(at, apierr.UniqueItems, "%s is listed twice", cf.Name)
			}
		}
	}
}

func validateFees(f *apierr.Fields, list []FeeInput) {
	seen := map[string]bool{}
	for i, fc := range list {
		at := func(k string) string { return fmt.Sprintf("feeConfigs[%d].%s", i, k) }
		if fc.FeeType == nil {
			f.Add(at("feeType"), apierr.Required, "is required")
		} else if !slices.Contains(FeeTypes, *fc.FeeType) {
			f.Add(at("feeType"), apierr.Enum, "must be one of %s", strings.Join(FeeTypes, ", "))
		}
		if fc.SourceCurrency == nil {
			f.Add(at("sourceCurrency"), apierr.Required, "is required")
		} else if !slices.Contains(FeeSourceCurrencies, *fc.SourceCurrency) {
			f.Add(at("sourceCurrency"), apierr.Enum, "platform fees apply to USD sources only")
		}
		if fc.FeeType != nil && fc.SourceCurrency != nil {
			key := *fc.FeeType + "/" + *fc.SourceCurrency
			if seen[key] {
				f.Add(at("feeType"), apierr.UniqueItems, "a fee config for %s is listed twice", key)
			}
			seen[key] = true
		}
		if fc.VariableFeeBps == nil {
			f.Add(at("variableFeeBps"), apierr.Required, "is required")
		} else if *fc.VariableFeeBps < 0 || *fc.VariableFeeBps > 10000 {
			f.Add(at("variableFeeBps"), apierr.Maximum, "must be from 0 to 10000 basis points")
		}
		switch {
		case fc.FixedFee == nil:
			f.Add(at("fixedFee"), apierr.Required, "is required")
		default:
			if fc.FixedFee.Amount == nil {
				f.Add(at("fixedFee.amount"), apierr.Required, "is required")
			} else if *fc.FixedFee.Amount < 0 {
				f.Add(at("fixedFee.amount"), apierr.Minimum, "must be at least 0")
			}
			if fc.FixedFee.Currency == nil {
				f.Add(at("fixedFee.currency"), apierr.Required, "is required")
			} else if !known(*fc.FixedFee.Currency) {
				f.Add(at("fixedFee.currency"), apierr.Enum, "is not a supported currency")
			}
		}
	}
}

func known(code string) bool { _, ok := currency.Lookup(code); return ok }

// apply returns doc with the (validated) patch applied.
func (p Patch) apply(doc document) document {
	setOpt(&doc.UmaDomain, p.UmaDomain)
	setOpt(&doc.WebhookEndpoint, p.WebhookEndpoint)
	if p.SupportedCurrencies != nil {
		doc.SupportedCurrencies = make([]CurrencyConfig, len(*p.SupportedCurrencies))
		for i, c := range *p.SupportedCurrencies {
			rcf := c.RequiredCounterpartyFields
			if rcf == nil {
				rcf = []CounterpartyField{}
			}
			doc.SupportedCurrencies[i] = CurrencyConfig{CurrencyCode: *c.CurrencyCode, MinAmount: *c.MinAmount,
				MaxAmount: *c.MaxAmount, RequiredCounterpartyFields: rcf, EnabledTransactionTypes: c.EnabledTransactionTypes}
		}
	}
	if p.FeeConfigs != nil {
		// Merge by (feeType, sourceCurrency); zero variable and fixed fee
		// deactivates the entry.
		for _, in := range *p.FeeConfigs {
			fc := FeeConfig{FeeType: *in.FeeType, SourceCurrency: *in.SourceCurrency, VariableFeeBps: *in.VariableFeeBps,
				FixedFee: FixedFee{Amount: *in.FixedFee.Amount, Currency: *in.FixedFee.Currency}}
			doc.FeeConfigs = slices.DeleteFunc(doc.FeeConfigs, func(e FeeConfig) bool {
				return e.FeeType == fc.FeeType && e.SourceCurrency == fc.SourceCurrency
			})
			if fc.VariableFeeBps != 0 || fc.FixedFee.Amount != 0 {
				doc.FeeConfigs = append(doc.FeeConfigs, fc)
			}
		}
	}
	if p.SkipVerificationPaperwork != nil {
		doc.SkipVerificationPaperwork = *p.SkipVerificationPaperwork
	}
	if c := p.CardConfigs; c != nil {
		setOpt(&doc.CardConfigs.PinTargetOrigin, c.PinTargetOrigin)
		setOpt(&doc.CardConfigs.PanRevealCssUrl, c.PanRevealCssUrl)
		setOpt(&doc.CardConfigs.MaxSpendPerTransaction, c.MaxSpendPerTransaction)
		setOpt(&doc.CardConfigs.MaxSpendPerDay, c.MaxSpendPerDay)
		setOpt(&doc.CardConfigs.MaxTransactionsPerDay, c.MaxTransactionsPerDay)
		setOpt(&doc.CardConfigs.AgentBlockedMccs, c.AgentBlockedMccs)
	}
	if t := p.CardTokenization2faConfig; t != nil {
		cur := &doc.CardTokenization2faConfig
		setOpt(&cur.DisplayName, t.DisplayName)
		setOpt(&cur.LogoUrl, t.LogoUrl)
		if e := t.Email; e != nil {
			if cur.Email == nil {
				cur.Email = &Tokenization2FAEmail{}
			}
			setOpt(&cur.Email.FromAddress, e.FromAddress)
			setOpt(&cur.Email.FromName, e.FromName)
			setOpt(&cur.Email.ReplyToAddress, e.ReplyToAddress)
			setOpt(&cur.Email.Subject, e.Subject)
			setOpt(&cur.Email.BodyText, e.BodyText)
		}
		if s := t.Sms; s != nil {
			if cur.Sms == nil {
				cur.Sms = &Tokenization2FASms{}
			}
			setOpt(&cur.Sms.TemplateSid, s.TemplateSid)
			setOpt(&cur.Sms.BodyText, s.BodyText)
		}
	}
	if p.EmbeddedWalletConfig != nil {
		doc.EmbeddedWalletConfig = p.EmbeddedWalletConfig.apply(doc.EmbeddedWalletConfig)
	}
	return doc
}

// setOpt: omitted keeps, null clears, a value replaces.
func setOpt[T any](dst **T, o jsonx.Optional[T]) {
	if o.Set {
		*dst = o.Ptr()
	}
}

// checkMCCs checks a list of merchant category codes: four digits each, no
// repeats, at most 500.
func checkMCCs(f *apierr.Fields, field string, l []string) {
	if len(l) > 500 {
		f.Add(field, apierr.MaxItems, "must hold at most 500 codes")
		return
	}
	seen := map[string]bool{}
	for _, m := range l {
		if len(m) != 4 || strings.Trim(m, "0123456789") != "" {
			f.Add(field, apierr.Pattern, "must hold merchant category codes of four digits, such as 7995")
			return
		}
		if seen[m] {
			f.Add(field, apierr.UniqueItems, "must not repeat a code (%s)", m)
			return
		}
		seen[m] = true
	}
}
