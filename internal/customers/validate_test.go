package customers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

var now = time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)

func decodeInto[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return v
}

func fieldMap(err error) map[string]string {
	out := map[string]string{}
	for _, fe := range apierr.FieldList(err) {
		out[fe.Field] = fe.Constraint
	}
	return out
}

func snapshot(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const goodIndividual = `{"customerType":"INDIVIDUAL","fullName":"Jane Doe","birthDate":"1990-01-15","nationality":"US",
	"idType":"SSN","identifier":"123-45-6789","countryOfIssuance":"US",
	"address":{"line1":"1 Main St","city":"Springfield","postalCode":"62701","country":"US"},
	"email":"jane@example.com","phoneNumber":"+14155551234","currencies":["USD"],
	"sourceOfFundsCategories":["SALARY","OTHER"],"sourceOfFundsOtherDescription":"Lottery",
	"agreementConsents":[{"type":"LIGHTSPARK_END_USER_TERMS","acceptedAt":"2025-10-01T12:00:00Z","ipAddress":"198.51.100.1","termsVersion":"2025-10-13","acceptanceMethod":"CHECKBOX"}]}`

const goodBusiness = `{"customerType":"BUSINESS","registrationNumber":"R-1","currencies":["EUR"],"email":"a@b.example","phoneNumber":"+4930123456",
	"businessInfo":{"legalName":"Acme GmbH","taxId":"DE123","incorporatedOn":"2018-03-14","entityType":"LLC","naicsCode":"5415",
	"countriesOfOperation":["DE","FR"],"purposeOfAccount":"OTHER","purposeOfAccountOtherDescription":"Escrow"}}`

// Every field rule of a create request (R-ERR-02, R-CUST-04, R-CUST-05,
// R-CUST-08, R-CUST-12, R-CUST-14).
func TestCreateRequest_FieldRules_R_ERR_02(t *testing.T) {
	cat := DefaultCatalog()
	for _, ok := range []string{goodIndividual, goodBusiness,
		`{"customerType":"BUSINESS","businessInfo":{"legalName":"No tax id needed for USD"}}`,
		`{"customerType":"INDIVIDUAL","fullName":"Min"}`} {
		if err := decodeInto[CreateRequest](t, ok).Validate(now, cat); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	consent := func(kv string) string {
		return `{"type":"LIGHTSPARK_END_USER_TERMS","acceptedAt":"2025-10-01T12:00:00Z","ipAddress":"198.51.100.1","termsVersion":"2025-10-13","acceptanceMethod":"CHECKBOX"` + kv + `}`
	}
	cases := []struct {
		body string
		want map[string]string
	}{
		{`{}`, map[string]string{"customerType": "required"}},
		{`{"customerType":"PET"}`, map[string]string{"customerType": "enum"}},
		{`{"customerType":"INDIVIDUAL"}`, map[string]string{"fullName": "required"}},
		{`{"customerType":"INDIVIDUAL","fullName":" "}`, map[string]string{"fullName": "minLength"}},
		{`{"customerType":"INDIVIDUAL","fullName":"a\u0000b"}`, map[string]string{"fullName": "pattern"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","birthDate":"1990-1-5"}`, map[string]string{"birthDate": "format"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","birthDate":"1899-12-31"}`, map[string]string{"birthDate": "minimum"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","birthDate":"2025-10-14"}`, map[string]string{"birthDate": "maximum"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","nationality":"us","countryOfIssuance":"QQ","region":"USA"}`,
			map[string]string{"nationality": "pattern", "countryOfIssuance": "enum", "region": "pattern"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","idType":"ITIN","identifier":"123-45-6789"}`, map[string]string{"identifier": "pattern"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","idType":"EIN","identifier":"12-3456789","countryOfIssuance":"DE"}`,
			map[string]string{"countryOfIssuance": "enum"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","identifier":"123456789"}`, map[string]string{"idType": "required"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","email":"a@","phoneNumber":"+0123"}`, map[string]string{"email": "format", "phoneNumber": "pattern"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","address":{}}`,
			map[string]string{"address.line1": "required", "address.postalCode": "required", "address.country": "required"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","currencies":["USD","usd","USD"]}`, map[string]string{"currencies[1]": "enum", "currencies[2]": "uniqueItems"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","sourceOfWealthCategories":["OTHER","OTHER"],"pepStatus":"MAYBE","netWorthRange":"LOTS","annualIncomeRange":"X","expectedMonthlyTransactionCount":"9","expectedMonthlyTransactionVolume":"9"}`,
			map[string]string{"sourceOfWealthCategories[1]": "uniqueItems", "sourceOfWealthOtherDescription": "required", "pepStatus": "enum",
				"netWorthRange": "enum", "annualIncomeRange": "enum", "expectedMonthlyTransactionCount": "enum", "expectedMonthlyTransactionVolume": "enum"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","region":"FR"}`, map[string]string{"email": "required", "phoneNumber": "required"}},
		{`{"customerType":"BUSINESS","fullName":"A","pepStatus":"NONE"}`,
			map[string]string{"fullName": "additionalProperties", "pepStatus": "additionalProperties", "businessInfo": "required"}},
		{`{"customerType":"BUSINESS","businessInfo":{}}`, map[string]string{"businessInfo.legalName": "required"}},
		{`{"customerType":"BUSINESS","registrationNumber":"A","businessInfo":{"legalName":"B","registrationNumber":"C","naicsCode":"1","taxId":"#","countriesOfOperation":["XX"],"sourceOfFundsCategories":["OTHER"],"businessType":"PIRACY"}}`,
			map[string]string{"registrationNumber": "oneOf", "businessInfo.naicsCode": "pattern", "businessInfo.taxId": "pattern",
				"businessInfo.countriesOfOperation[0]": "enum", "businessInfo.sourceOfFundsOtherDescription": "required", "businessInfo.businessType": "enum"}},
		{`{"customerType":"BUSINESS","region":"IT","email":"a@b.it","phoneNumber":"+391234567","businessInfo":{"legalName":"B"}}`,
			map[string]string{"businessInfo.taxId": "required", "businessInfo.incorporatedOn": "required"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","agreementConsents":[` + consent("") + `,` + consent("") + `]}`,
			map[string]string{"agreementConsents[1].type": "uniqueItems"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","agreementConsents":[` + consent("") + `],"endUserTermsConsent":{"acceptedAt":"2025-10-01T12:00:00Z","ipAddress":"::1","termsVersion":"v","acceptanceMethod":"CHECKBOX"}}`,
			map[string]string{"endUserTermsConsent": "oneOf"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","agreementConsents":[{}]}`,
			map[string]string{"agreementConsents[0].type": "required", "agreementConsents[0].acceptedAt": "required", "agreementConsents[0].ipAddress": "required",
				"agreementConsents[0].termsVersion": "required", "agreementConsents[0].acceptanceMethod": "required"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","agreementConsents":[{"type":"X","acceptedAt":"yesterday","ipAddress":"1.2.3","termsVersion":"","acceptanceMethod":"WINK"}]}`,
			map[string]string{"agreementConsents[0].type": "enum", "agreementConsents[0].acceptedAt": "format", "agreementConsents[0].ipAddress": "format",
				"agreementConsents[0].termsVersion": "minLength", "agreementConsents[0].acceptanceMethod": "enum"}},
		{`{"customerType":"INDIVIDUAL","fullName":"A","agreementConsents":[` + strings.Repeat(consent("")+",", 10) + consent("") + `]}`,
			map[string]string{"agreementConsents": "maxItems"}},
	}
	for _, c := range cases {
		req := decodeInto[CreateRequest](t, c.body)
		got := fieldMap(req.Validate(now, cat))
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.body, got, c.want)
		}
	}
}

// Update requests accept partial addresses, refuse email and phoneNumber
// together (R-CUST-23), and check the merged result in the service.
func TestUpdateRequest_FieldRules_R_CUST_23(t *testing.T) {
	cat := DefaultCatalog()
	cases := []struct {
		body string
		want map[string]string
	}{
		{`{}`, map[string]string{}},
		{`{"address":{"city":"Chicago"}}`, map[string]string{}},
		{`{"email":"a@b.example","phoneNumber":"+14155551234"}`, map[string]string{"email": "oneOf", "phoneNumber": "oneOf"}},
		{`{"customerType":"INDIVIDUAL","businessInfo":{"legalName":"X"}}`, map[string]string{"businessInfo": "additionalProperties"}},
		{`{"birthDate":"31-12-1990","address":{"country":"Germany"}}`, map[string]string{"birthDate": "format", "address.country": "pattern"}},
	}
	for _, c := range cases {
		got := fieldMap(decodeInto[UpdateRequest](t, c.body).Validate(now, cat))
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.body, got, c.want)
		}
	}
	// merged: fields sent replace, address and businessInfo merge.
	cur := decodeInto[CreateRequest](t, goodIndividual).newProfile()
	next := decodeInto[UpdateRequest](t, `{"fullName":"New","address":{"city":"Chicago"},"currencies":[]}`).merged(cur)
	if *next.FullName != "New" || *next.Address.City != "Chicago" || *next.Address.Line1 != "1 Main St" || len(next.Currencies) != 0 ||
		*next.BirthDate != "1990-01-15" {
		t.Fatalf("%+v", next)
	}
	if *cur.FullName != "Jane Doe" || *cur.Address.City != "Springfield" || len(cur.Currencies) != 1 {
		t.Fatal("merged changed the stored profile")
	}
}

func TestOtherRequests_FieldRules(t *testing.T) {
	cases := []struct {
		err  error
		want map[string]string
	}{
		{VerificationRequest{}.Validate(), map[string]string{"customerId": "required"}},
		{decodeInto[ConfirmRequest](t, `{"code":"12345a"}`).Validate(), map[string]string{"code": "pattern"}},
		{decodeInto[ConfirmRequest](t, `{}`).Validate(), map[string]string{"code": "required"}},
		{decodeInto[DocumentRequest](t, `{"documentHolder":"","documentType":"SCROLL","country":"XX","side":"EDGE","issuedOn":"2025-13-01","fileName":"`+strings.Repeat("f", 256)+`"}`).Validate(now),
			map[string]string{"documentHolder": "minLength", "documentType": "enum", "country": "enum", "side": "enum", "issuedOn": "format", "fileName": "maxLength"}},
		{decodeInto[OwnerCreateRequest](t, `{"customerId":"C","roles":["UBO","UBO"],"ownershipPercentage":-1,"personalInfo":{"firstName":"A","lastName":"B","phoneNumber":"1","address":{"line1":"x"}}}`).Validate(now),
			map[string]string{"roles[1]": "uniqueItems", "ownershipPercentage": "minimum", "personalInfo.phoneNumber": "pattern",
				"personalInfo.address.postalCode": "required", "personalInfo.address.country": "required"}},
		{decodeInto[OwnerUpdateRequest](t, `{"roles":[],"personalInfo":{"address":{"city":"Only"}}}`).Validate(now), map[string]string{"roles": "minLength"}},
	}
	for i, c := range cases {
		if got := fieldMap(c.err); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("case %d:\n got %v\nwant %v", i, got, c.want)
		}
	}
	if err := decodeInto[ConfirmRequest](t, `{"code":"123456"}`).Validate(); err != nil {
		t.Fatal(err)
	}
}

// Validation never changes the request.
func TestValidate_NeverMutates(t *testing.T) {
	cat := DefaultCatalog()
	catBefore := snapshot(t, cat)
	bodies := []string{goodIndividual, goodBusiness, `{"customerType":"INDIVIDUAL","registrationNumber":"R","address":{}}`,
		`{"customerType":"BUSINESS","registrationNumber":"R","businessInfo":{"legalName":"X"}}`, `{}`}
	for _, b := range bodies {
		c := decodeInto[CreateRequest](t, b)
		before := snapshot(t, c)
		_ = c.Validate(now, cat)
		_ = c.newProfile()
		if after := snapshot(t, c); after != before {
			t.Errorf("CreateRequest.Validate changed %s:\n%s", before, after)
		}
		u := decodeInto[UpdateRequest](t, b)
		before = snapshot(t, u)
		_ = u.Validate(now, cat)
		_ = u.merged(Profile{})
		if after := snapshot(t, u); after != before {
			t.Errorf("UpdateRequest.Validate changed %s", before)
		}
	}
	o := decodeInto[OwnerCreateRequest](t, `{"customerId":"C","roles":["UBO"],"personalInfo":{"firstName":"A","lastName":"B","address":{"line1":"x"}}}`)
	before := snapshot(t, o)
	_ = o.Validate(now)
	if snapshot(t, o) != before {
		t.Error("OwnerCreateRequest.Validate mutated")
	}
	d := decodeInto[DocumentRequest](t, `{"documentHolder":"X","documentType":"PASSPORT"}`)
	before = snapshot(t, d)
	_ = d.Validate(now)
	if snapshot(t, d) != before {
		t.Error("DocumentRequest.Validate mutated")
	}
	if snapshot(t, cat) != catBefore {
		t.Error("the catalog changed")
	}
	// A deep copy: the stored profile shares nothing with the request.
	c := decodeInto[CreateRequest](t, goodIndividual)
	p := c.newProfile()
	*p.Address.Line1 = "changed"
	p.Currencies[0] = "EUR"
	if *c.Address.Line1 != "1 Main St" || c.Currencies[0] != "USD" {
		t.Fatal("newProfile shares memory with the request")
	}
	if !reflect.DeepEqual(decodeInto[CreateRequest](t, goodIndividual).newProfile().Currencies, []string{"USD"}) {
		t.Fatal("copy")
	}
}

// The end-user-terms catalog: known versions, deprecated form mapped to the
// spec's agreement type (R-CUST-13, R-CUST-16).
func TestCatalog_R_CUST_13_16(t *testing.T) {
	cat := DefaultCatalog()
	cur := cat.Current[0]
	if cur.Type != AgreementEndUserTerms || !cat.Known(cur.Type, cur.Version) || cat.Known(cur.Type, "nope") {
		t.Fatal(cat)
	}
	cat.Earlier = map[string][]string{AgreementEndUserTerms: {"2024-01-01"}}
	if !cat.Known(AgreementEndUserTerms, "2024-01-01") {
		t.Fatal("earlier versions stay valid")
	}
	v := "x"
	list := consents(nil, &EndUserTermsConsentInput{TermsVersion: &v})
	if len(list) != 1 || *list[0].Type != "LIGHTSPARK_END_USER_TERMS" {
		t.Fatal(list)
	}
	err := cat.checkVersions(list)
	if e, ok := apierr.From(err); !ok || e.Code != "END_USER_TERMS_VERSION_NOT_FOUND" || e.Status != 400 {
		t.Fatalf("%v", err)
	}
}

func TestProviderRule(t *testing.T) {
	s := func(v string) *string { return &v }
	if ProviderRuleFor(Profile{}) != ProviderDefault || ProviderRuleFor(Profile{Region: s("US"), Currencies: []string{"USD"}}) != ProviderDefault {
		t.Fatal("default")
	}
	if ProviderRuleFor(Profile{Region: s("NO")}) != ProviderEEA || ProviderRuleFor(Profile{Currencies: []string{"USD", "EUR"}}) != ProviderEEA {
		t.Fatal("EEA")
	}
	if len(countries) != 249 || len(eea) != 30 {
		t.Fatalf("%d countries, %d EEA", len(countries), len(eea))
	}
}
