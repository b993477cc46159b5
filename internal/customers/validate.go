package customers

import (
	"fmt"
	"net/mail"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
)

// Limits on customer fields.
const (
	MaxTextLength        = 255
	MaxDescriptionLength = 500
	MaxListLength        = 50
	MaxCurrencies        = 20
	MaxConsents          = 10
	// consentClockSkew is how far in the future acceptedAt may be, to allow
	// for clocks that run a little ahead.
	consentClockSkew = 5 * time.Minute
)

// constraintOneOf names the failure of two fields that may not be sent
// together (the JSON Schema keyword for "exactly one of").
const constraintOneOf = "oneOf"

var (
	e164RE   = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)
	dateRE   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	ssnRE    = regexp.MustCompile(`^[0-9]{3}-?[0-9]{2}-?[0-9]{4}$`)
	einRE    = regexp.MustCompile(`^[0-9]{2}-?[0-9]{7}$`)
	taxIDRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ./-]{0,63}$`)
	naicsRE  = regexp.MustCompile(`^[0-9]{2,6}$`)
	earliest = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
)

// CreateRequest is the body of POST /customers. RegistrationNumber is the
// business registration number (R-CUST-09); it may also be sent as
// businessInfo.registrationNumber, and is returned in both places.
type CreateRequest struct {
	CustomerType       *string `json:"customerType"`
	PlatformCustomerID *string `json:"platformCustomerId"`
	RegistrationNumber *string `json:"registrationNumber"`
	Profile
	AgreementConsents   []ConsentInput            `json:"agreementConsents"`
	EndUserTermsConsent *EndUserTermsConsentInput `json:"endUserTermsConsent"`
}

// UpdateRequest is the body of PATCH /customers/{customerId}: the fields to
// change. Omitted (or null) fields keep their value; address and
// businessInfo are merged field by field; lists replace the stored list.
// customerType may be sent but must match the customer's.
type UpdateRequest struct {
	CreateRequest
}

// v collects field failures.
type v struct{ f apierr.Fields }

func (x *v) add(field, constraint, format string, args ...any) {
	x.f.Add(field, constraint, format, args...)
}

// text checks an optional string: not blank, at most max characters, no
// control characters.
func (x *v) text(field string, s *string, max int) {
	if s == nil {
		return
	}
	switch {
	case strings.TrimSpace(*s) == "":
		x.add(field, apierr.MinLength, "must not be blank")
	case utf8.RuneCountInString(*s) > max:
		x.add(field, apierr.MaxLength, "must be at most %d characters", max)
	case strings.ContainsFunc(*s, unicode.IsControl):
		x.add(field, apierr.Pattern, "must not contain control characters")
	}
}

func (x *v) required(field string, s *string) bool {
	if s == nil {
		x.add(field, apierr.Required, "is required")
		return false
	}
	return true
}

func (x *v) enum(field string, s *string, allowed []string) {
	if s != nil && !slices.Contains(allowed, *s) {
		x.add(field, apierr.Enum, "must be one of %s", strings.Join(allowed, ", "))
	}
}

func (x *v) enumList(field string, list []string, allowed []string) {
	if len(list) > len(allowed) {
		x.add(field, apierr.MaxItems, "must have at most %d items", len(allowed))
		return
	}
	seen := map[string]bool{}
	for i, s := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case !slices.Contains(allowed, s):
			x.add(at, apierr.Enum, "must be one of %s", strings.Join(allowed, ", "))
		case seen[s]:
			x.add(at, apierr.UniqueItems, "%s is listed twice", s)
		}
		seen[s] = true
	}
}

func (x *v) country(field string, s *string) {
	if s == nil {
		return
	}
	switch {
	case len(*s) != 2 || strings.ToUpper(*s) != *s:
		x.add(field, apierr.Pattern, "must be an ISO 3166-1 alpha-2 country code in capitals, such as US")
	case !IsCountry(*s):
		x.add(field, apierr.Enum, "%q is not an ISO 3166-1 alpha-2 country code", *s)
	}
}

func (x *v) countries(field string, list []string) {
	if len(list) > MaxListLength {
		x.add(field, apierr.MaxItems, "must have at most %d items", MaxListLength)
		return
	}
	seen := map[string]bool{}
	for i, c := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		x.country(at, &c)
		if seen[c] {
			x.add(at, apierr.UniqueItems, "%s is listed twice", c)
		}
		seen[c] = true
	}
}

// date checks a YYYY-MM-DD calendar date that is not in the future and not
// before 1900.
func (x *v) date(field string, s *string, now time.Time) {
	if s == nil {
		return
	}
	d, err := time.Parse(time.DateOnly, *s)
	switch {
	case !dateRE.MatchString(*s) || err != nil:
		x.add(field, apierr.Format, "must be a calendar date YYYY-MM-DD, such as 1990-01-15")
	case d.After(now.UTC()):
		x.add(field, apierr.Maximum, "must not be in the future")
	case d.Before(earliest):
		x.add(field, apierr.Minimum, "must be on or after 1900-01-01")
	}
}

func (x *v) email(field string, s *string) {
	if s == nil {
		return
	}
	if len(*s) > 254 {
		x.add(field, apierr.MaxLength, "must be at most 254 characters")
		return
	}
	if a, err := mail.ParseAddress(*s); err != nil || a.Address != *s || !strings.Contains(*s, "@") {
		x.add(field, apierr.Format, "must be an email address such as jane@example.com")
	}
}

func (x *v) phone(field string, s *string) {
	if s != nil && !e164RE.MatchString(*s) {
		x.add(field, apierr.Pattern, "must be in E.164 format, such as +14155551234")
	}
}

// address checks the fields of an address; complete also requires line1,
// postalCode and country (a patch may carry only the fields it changes).
func (x *v) address(field string, a *Address, complete bool) {
	if a == nil {
		return
	}
	at := func(k string) string { return field + "." + k }
	if complete {
		x.required(at("line1"), a.Line1)
		x.required(at("postalCode"), a.PostalCode)
		x.required(at("country"), a.Country)
	}
	x.text(at("line1"), a.Line1, MaxTextLength)
	x.text(at("line2"), a.Line2, MaxTextLength)
	x.text(at("city"), a.City, MaxTextLength)
	x.text(at("state"), a.State, MaxTextLength)
	x.text(at("postalCode"), a.PostalCode, 32)
	x.country(at("country"), a.Country)
}

// otherDescribed requires a description when a choice is OTHER.
func (x *v) otherDescribed(field string, chosen bool, desc *string) {
	if chosen && desc == nil {
		x.add(field, apierr.Required, "is required when OTHER is chosen")
	}
}

// identification checks idType and identifier together.
func (x *v) identification(prefix string, idType, identifier, countryOfIssuance *string) {
	at := func(k string) string { return prefix + k }
	if idType != nil && identifier == nil {
		x.add(at("identifier"), apierr.Required, "is required when idType is set")
	}
	if identifier != nil && idType == nil {
		x.add(at("idType"), apierr.Required, "is required when identifier is set")
	}
	if idType == nil || identifier == nil || !slices.Contains(IDTypes, *idType) {
		return
	}
	id := *identifier
	switch *idType {
	case "SSN":
		if !ssnRE.MatchString(id) {
			x.add(at("identifier"), apierr.Pattern, "must be an SSN: ###-##-#### or 9 digits")
		}
	case "ITIN":
		if !ssnRE.MatchString(id) || id[0] != '9' {
			x.add(at("identifier"), apierr.Pattern, "must be an ITIN: 9##-##-#### or 9 digits starting with 9")
		}
	case "EIN":
		if !einRE.MatchString(id) {
			x.add(at("identifier"), apierr.Pattern, "must be an EIN: ##-####### or 9 digits")
		}
	default:
		if !taxIDRE.MatchString(id) {
			x.add(at("identifier"), apierr.Pattern, "must be 1 to 64 letters, digits, spaces, '.', '/' or '-'")
		}
	}
	if *idType != "NON_US_TAX_ID" && countryOfIssuance != nil && *countryOfIssuance != "US" {
		x.add(at("countryOfIssuance"), apierr.Enum, "must be US for a %s", *idType)
	}
}

func (x *v) currencies(field string, list []string) {
	if len(list) > MaxCurrencies {
		x.add(field, apierr.MaxItems, "must have at most %d items", MaxCurrencies)
		return
	}
	seen := map[string]bool{}
	for i, c := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		if _, ok := currency.Lookup(c); !ok {
			x.add(at, apierr.Enum, "must be one of %s", strings.Join(currency.Codes(), ", "))
		} else if seen[c] {
			x.add(at, apierr.UniqueItems, "%s is listed twice", c)
		}
		seen[c] = true
	}
}

// individualOnly are the fields only individuals have; businessOnly the
// fields only businesses have.
func individualOnly(p Profile) []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("fullName", p.FullName != nil)
	add("birthDate", p.BirthDate != nil)
	add("nationality", p.Nationality != nil)
	add("idType", p.IDType != nil)
	add("identifier", p.Identifier != nil)
	add("countryOfIssuance", p.CountryOfIssuance != nil)
	add("sourceOfFundsCategories", p.SourceOfFundsCategories != nil)
	add("sourceOfFundsOtherDescription", p.SourceOfFundsOtherDescription != nil)
	add("sourceOfWealthCategories", p.SourceOfWealthCategories != nil)
	add("sourceOfWealthOtherDescription", p.SourceOfWealthOtherDescription != nil)
	add("purposeOfAccount", p.PurposeOfAccount != nil)
	add("purposeOfAccountOtherDescription", p.PurposeOfAccountOtherDescription != nil)
	add("expectedMonthlyTransactionCount", p.ExpectedMonthlyTransactionCount != nil)
	add("expectedMonthlyTransactionVolume", p.ExpectedMonthlyTransactionVolume != nil)
	add("annualIncomeRange", p.AnnualIncomeRange != nil)
	add("netWorthRange", p.NetWorthRange != nil)
	add("pepStatus", p.PepStatus != nil)
	return out
}

// typeFields refuses fields that do not belong to customers of typ.
func (x *v) typeFields(typ string, r CreateRequest) {
	switch typ {
	case Business:
		for _, name := range individualOnly(r.Profile) {
			x.add(name, apierr.AdditionalProperties, "is a field of INDIVIDUAL customers; a BUSINESS customer does not have it")
		}
	case Individual:
		if r.BusinessInfo != nil {
			x.add("businessInfo", apierr.AdditionalProperties, "is a field of BUSINESS customers; an INDIVIDUAL customer does not have it")
		}
		if r.RegistrationNumber != nil {
			x.add("registrationNumber", apierr.AdditionalProperties, "is a field of BUSINESS customers; an INDIVIDUAL customer does not have it")
		}
	}
}

// fields checks every field of r on its own (formats, lengths, enums);
// patch accepts a partial address.
func (x *v) fields(r CreateRequest, now time.Time, cat Catalog, patch bool) {
	x.enum("customerType", r.CustomerType, CustomerTypes)
	x.text("platformCustomerId", r.PlatformCustomerID, MaxTextLength)
	x.text("registrationNumber", r.RegistrationNumber, 64)
	p := r.Profile
	x.text("fullName", p.FullName, MaxTextLength)
	x.date("birthDate", p.BirthDate, now)
	x.country("nationality", p.Nationality)
	x.enum("idType", p.IDType, IDTypes)
	x.text("identifier", p.Identifier, 64)
	x.country("countryOfIssuance", p.CountryOfIssuance)
	x.address("address", p.Address, !patch)
	x.email("email", p.Email)
	x.phone("phoneNumber", p.PhoneNumber)
	x.country("region", p.Region)
	x.currencies("currencies", p.Currencies)
	x.enumList("sourceOfFundsCategories", p.SourceOfFundsCategories, IndividualSourcesOfFunds)
	x.text("sourceOfFundsOtherDescription", p.SourceOfFundsOtherDescription, MaxDescriptionLength)
	x.enumList("sourceOfWealthCategories", p.SourceOfWealthCategories, SourcesOfWealth)
	x.text("sourceOfWealthOtherDescription", p.SourceOfWealthOtherDescription, MaxDescriptionLength)
	x.enum("purposeOfAccount", p.PurposeOfAccount, PurposesOfAccount)
	x.text("purposeOfAccountOtherDescription", p.PurposeOfAccountOtherDescription, MaxDescriptionLength)
	x.enum("expectedMonthlyTransactionCount", p.ExpectedMonthlyTransactionCount, TransactionCounts)
	x.enum("expectedMonthlyTransactionVolume", p.ExpectedMonthlyTransactionVolume, TransactionVolumes)
	x.enum("annualIncomeRange", p.AnnualIncomeRange, IncomeRanges)
	x.enum("netWorthRange", p.NetWorthRange, NetWorthRanges)
	x.enum("pepStatus", p.PepStatus, PepStatuses)
	if b := p.BusinessInfo; b != nil {
		const pre = "businessInfo."
		x.text(pre+"legalName", b.LegalName, MaxTextLength)
		x.text(pre+"doingBusinessAs", b.DoingBusinessAs, MaxTextLength)
		x.country(pre+"country", b.Country)
		x.text(pre+"registrationNumber", b.RegistrationNumber, 64)
		x.date(pre+"incorporatedOn", b.IncorporatedOn, now)
		x.enum(pre+"entityType", b.EntityType, EntityTypes)
		if b.TaxID != nil && !taxIDRE.MatchString(*b.TaxID) {
			x.add(pre+"taxId", apierr.Pattern, "must be 1 to 64 letters, digits, spaces, '.', '/' or '-'")
		}
		x.countries(pre+"countriesOfOperation", b.CountriesOfOperation)
		x.enum(pre+"businessType", b.BusinessType, BusinessTypes)
		if b.NaicsCode != nil && !naicsRE.MatchString(*b.NaicsCode) {
			x.add(pre+"naicsCode", apierr.Pattern, "must be 2 to 6 digits")
		}
		x.enum(pre+"purposeOfAccount", b.PurposeOfAccount, PurposesOfAccount)
		x.text(pre+"purposeOfAccountOtherDescription", b.PurposeOfAccountOtherDescription, MaxDescriptionLength)
		x.text(pre+"sourceOfFunds", b.SourceOfFunds, 1000)
		x.enumList(pre+"sourceOfFundsCategories", b.SourceOfFundsCategories, BusinessSourcesOfFunds)
		x.text(pre+"sourceOfFundsOtherDescription", b.SourceOfFundsOtherDescription, MaxDescriptionLength)
		x.enum(pre+"expectedMonthlyTransactionCount", b.ExpectedMonthlyTransactionCount, TransactionCounts)
		x.enum(pre+"expectedMonthlyTransactionVolume", b.ExpectedMonthlyTransactionVolume, TransactionVolumes)
		x.countries(pre+"expectedRecipientJurisdictions", b.ExpectedRecipientJurisdictions)
		x.countries(pre+"expectedCounterpartyCountries", b.ExpectedCounterpartyCountries)
		x.text(pre+"primaryContactFirstName", b.PrimaryContactFirstName, 250)
		x.text(pre+"primaryContactLastName", b.PrimaryContactLastName, 250)
		if r.RegistrationNumber != nil && b.RegistrationNumber != nil && *r.RegistrationNumber != *b.RegistrationNumber {
			x.add("registrationNumber", constraintOneOf, "differs from businessInfo.registrationNumber; send one of them, or the same value in both")
		}
	}
	x.consents(r.AgreementConsents, r.EndUserTermsConsent, now, cat)
}

func (x *v) consents(list []ConsentInput, eut *EndUserTermsConsentInput, now time.Time, cat Catalog) {
	if eut != nil && list != nil {
		x.add("endUserTermsConsent", constraintOneOf,
			"cannot be sent with agreementConsents; endUserTermsConsent is deprecated, send its entry in agreementConsents")
	}
	if len(list) > MaxConsents {
		x.add("agreementConsents", apierr.MaxItems, "must have at most %d entries", MaxConsents)
		return
	}
	seen := map[string]bool{}
	for i, c := range list {
		pre := fmt.Sprintf("agreementConsents[%d].", i)
		if x.required(pre+"type", c.Type) {
			x.enum(pre+"type", c.Type, cat.Types())
			if seen[*c.Type] {
				x.add(pre+"type", apierr.UniqueItems, "%s is listed twice; send at most one entry per agreement type", *c.Type)
			}
			seen[*c.Type] = true
		}
		x.consentFields(pre, c.AcceptedAt, c.IPAddress, c.TermsVersion, c.AcceptanceMethod, now)
	}
	if eut != nil {
		x.consentFields("endUserTermsConsent.", eut.AcceptedAt, eut.IPAddress, eut.TermsVersion, eut.AcceptanceMethod, now)
	}
}

func (x *v) consentFields(pre string, acceptedAt, ip, version, method *string, now time.Time) {
	if x.required(pre+"acceptedAt", acceptedAt) {
		t, err := time.Parse(time.RFC3339Nano, *acceptedAt)
		switch {
		case err != nil:
			x.add(pre+"acceptedAt", apierr.Format, "must be an RFC 3339 date-time such as 2025-10-13T09:30:00Z")
		case t.After(now.Add(consentClockSkew)):
			x.add(pre+"acceptedAt", apierr.Maximum, "must not be in the future")
		}
	}
	if x.required(pre+"ipAddress", ip) {
		if _, err := netip.ParseAddr(*ip); err != nil || len(*ip) > 45 {
			x.add(pre+"ipAddress", apierr.Format, "must be an IPv4 or IPv6 address")
		}
	}
	if x.required(pre+"termsVersion", version) {
		x.text(pre+"termsVersion", version, 64)
	}
	if x.required(pre+"acceptanceMethod", method) {
		x.enum(pre+"acceptanceMethod", method, AcceptanceMethods)
	}
}

// rules checks what depends on several fields of the customer as it will be
// stored: type-specific requirements, identification, OTHER descriptions,
// and what the customer's provider needs (contact details for providers that
// verify them, tax id and incorporation date for direct customer accounts).
func (x *v) rules(typ string, p Profile) {
	x.identification("", p.IDType, p.Identifier, p.CountryOfIssuance)
	x.address("address", p.Address, true)
	x.otherDescribed("sourceOfFundsOtherDescription", slices.Contains(p.SourceOfFundsCategories, "OTHER"), p.SourceOfFundsOtherDescription)
	x.otherDescribed("sourceOfWealthOtherDescription", slices.Contains(p.SourceOfWealthCategories, "OTHER"), p.SourceOfWealthOtherDescription)
	x.otherDescribed("purposeOfAccountOtherDescription", p.PurposeOfAccount != nil && *p.PurposeOfAccount == "OTHER", p.PurposeOfAccountOtherDescription)
	rule := ProviderRuleFor(p)
	if rule.VerifiesContact {
		if p.Email == nil {
			x.add("email", apierr.Required, "is required: customers served by the %s provider verify their email before KYC", rule.Name)
		}
		if p.PhoneNumber == nil {
			x.add("phoneNumber", apierr.Required, "is required: customers served by the %s provider verify their phone before KYC", rule.Name)
		}
	}
	if typ != Business {
		return
	}
	b := p.BusinessInfo
	if b == nil {
		x.add("businessInfo", apierr.Required, "is required for BUSINESS customers")
		return
	}
	x.required("businessInfo.legalName", b.LegalName)
	if rule.DirectAccounts {
		// R-CUST-08: required when the customer's currency uses direct
		// customer-owned accounts.
		if b.TaxID == nil {
			x.add("businessInfo.taxId", apierr.Required, "is required: the %s provider opens accounts in the business's own name", rule.Name)
		}
		if b.IncorporatedOn == nil {
			x.add("businessInfo.incorporatedOn", apierr.Required, "is required: the %s provider opens accounts in the business's own name", rule.Name)
		}
	}
	x.otherDescribed("businessInfo.sourceOfFundsOtherDescription", slices.Contains(b.SourceOfFundsCategories, "OTHER"), b.SourceOfFundsOtherDescription)
	x.otherDescribed("businessInfo.purposeOfAccountOtherDescription", b.PurposeOfAccount != nil && *b.PurposeOfAccount == "OTHER", b.PurposeOfAccountOtherDescription)
}

// Validate lists every invalid field of a create request; it never changes
// r. cat supplies the agreement types.
func (r CreateRequest) Validate(now time.Time, cat Catalog) error {
	x := &v{}
	if x.required("customerType", r.CustomerType) {
		x.typeFields(*r.CustomerType, r)
	}
	x.fields(r, now, cat, false)
	if r.CustomerType != nil && *r.CustomerType == Individual {
		x.required("fullName", r.FullName)
	}
	if r.CustomerType != nil && slices.Contains(CustomerTypes, *r.CustomerType) {
		x.rules(*r.CustomerType, r.newProfile())
	}
	return mergeDuplicates(x.f.Err())
}

// Validate lists every invalid field of an update request on its own; it
// never changes r. Rules that depend on the stored customer run when the
// service merges the change (Service.Update).
func (r UpdateRequest) Validate(now time.Time, cat Catalog) error {
	x := &v{}
	if r.CustomerType != nil {
		x.typeFields(*r.CustomerType, r.CreateRequest)
	}
	x.fields(r.CreateRequest, now, cat, true)
	if r.Email != nil && r.PhoneNumber != nil {
		// R-CUST-23: contact details change one at a time.
		x.add("email", constraintOneOf, "cannot be changed in the same request as phoneNumber; send two requests")
		x.add("phoneNumber", constraintOneOf, "cannot be changed in the same request as email; send two requests")
	}
	return mergeDuplicates(x.f.Err())
}

// newProfile is the profile a create request stores (a deep copy, with the
// registration number in businessInfo).
func (r CreateRequest) newProfile() Profile {
	p := clone(r.Profile)
	if r.RegistrationNumber != nil {
		if p.BusinessInfo == nil {
			p.BusinessInfo = &BusinessInfo{}
		}
		if p.BusinessInfo.RegistrationNumber == nil {
			rn := *r.RegistrationNumber
			p.BusinessInfo.RegistrationNumber = &rn
		}
	}
	return p
}

// merged returns the stored profile p with the update applied (a new value
// sharing no memory with either input; neither changes).
func (r UpdateRequest) merged(p Profile) Profile {
	out := clone(p)
	in := r.Profile
	set := func(dst **string, src *string) {
		if src != nil {
			v := *src
			*dst = &v
		}
	}
	list := func(dst *[]string, src []string) {
		if src != nil {
			*dst = slices.Clone(src)
		}
	}
	set(&out.FullName, in.FullName)
	set(&out.BirthDate, in.BirthDate)
	set(&out.Nationality, in.Nationality)
	set(&out.IDType, in.IDType)
	set(&out.Identifier, in.Identifier)
	set(&out.CountryOfIssuance, in.CountryOfIssuance)
	set(&out.Email, in.Email)
	set(&out.PhoneNumber, in.PhoneNumber)
	set(&out.Region, in.Region)
	list(&out.Currencies, in.Currencies)
	mergeAddress(&out.Address, in.Address)
	if r.RegistrationNumber != nil || in.BusinessInfo != nil {
		if out.BusinessInfo == nil {
			out.BusinessInfo = &BusinessInfo{}
		}
		set(&out.BusinessInfo.RegistrationNumber, r.RegistrationNumber)
	}
	if b := in.BusinessInfo; b != nil {
		o := out.BusinessInfo
		set(&o.LegalName, b.LegalName)
		set(&o.DoingBusinessAs, b.DoingBusinessAs)
		set(&o.Country, b.Country)
		set(&o.RegistrationNumber, b.RegistrationNumber)
		set(&o.IncorporatedOn, b.IncorporatedOn)
		set(&o.EntityType, b.EntityType)
		set(&o.TaxID, b.TaxID)
		set(&o.BusinessType, b.BusinessType)
		set(&o.NaicsCode, b.NaicsCode)
		set(&o.PurposeOfAccount, b.PurposeOfAccount)
		set(&o.PurposeOfAccountOtherDescription, b.PurposeOfAccountOtherDescription)
		set(&o.SourceOfFunds, b.SourceOfFunds)
		set(&o.SourceOfFundsOtherDescription, b.SourceOfFundsOtherDescription)
		set(&o.ExpectedMonthlyTransactionCount, b.ExpectedMonthlyTransactionCount)
		set(&o.ExpectedMonthlyTransactionVolume, b.ExpectedMonthlyTransactionVolume)
		set(&o.PrimaryContactFirstName, b.PrimaryContactFirstName)
		set(&o.PrimaryContactLastName, b.PrimaryContactLastName)
		list(&o.CountriesOfOperation, b.CountriesOfOperation)
		list(&o.SourceOfFundsCategories, b.SourceOfFundsCategories)
		list(&o.ExpectedRecipientJurisdictions, b.ExpectedRecipientJurisdictions)
		list(&o.ExpectedCounterpartyCountries, b.ExpectedCounterpartyCountries)
	}
	e := in.EDD
	list(&out.SourceOfFundsCategories, e.SourceOfFundsCategories)
	list(&out.SourceOfWealthCategories, e.SourceOfWealthCategories)
	set(&out.SourceOfFundsOtherDescription, e.SourceOfFundsOtherDescription)
	set(&out.SourceOfWealthOtherDescription, e.SourceOfWealthOtherDescription)
	set(&out.PurposeOfAccount, e.PurposeOfAccount)
	set(&out.PurposeOfAccountOtherDescription, e.PurposeOfAccountOtherDescription)
	set(&out.ExpectedMonthlyTransactionCount, e.ExpectedMonthlyTransactionCount)
	set(&out.ExpectedMonthlyTransactionVolume, e.ExpectedMonthlyTransactionVolume)
	set(&out.AnnualIncomeRange, e.AnnualIncomeRange)
	set(&out.NetWorthRange, e.NetWorthRange)
	set(&out.PepStatus, e.PepStatus)
	return out
}

// mergeDuplicates keeps one failure per field (the first), so a field never
// appears twice in details.errors.
func mergeDuplicates(err error) error {
	list := apierr.FieldList(err)
	if list == nil {
		return err
	}
	var f apierr.Fields
	seen := map[string]bool{}
	for _, fe := range list {
		if !seen[fe.Field] {
			f.Add(fe.Field, fe.Constraint, "%s", fe.Message)
			seen[fe.Field] = true
		}
	}
	return f.Err()
}
