package externalaccounts

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
)

// checker collects every invalid field of a request (R-ERR-02). Checks only
// read the request: validation never changes what it validates.
type checker struct{ f apierr.Fields }

func (x *checker) add(field, constraint, format string, args ...any) {
	x.f.Add(field, constraint, format, args...)
}

func (x *checker) err() error { return x.f.Err() }

// Validate checks a customer create request (R-EACCT-02..05, R-ERR-02).
func (r *CreateRequest) Validate(now time.Time) error {
	x := &checker{}
	switch {
	case r.CustomerID == nil:
		x.add("customerId", apierr.Required, "is required")
	case !id.Valid(id.Customer, *r.CustomerID):
		x.add("customerId", apierr.Pattern, "must be a customer id such as Customer:0199a1b2-…")
	}
	validateCommon(x, r.Currency, r.PlatformAccountID, r.OwnershipType, r.AccountInfo, now)
	return x.err()
}

// Validate checks a platform create request.
func (r *PlatformCreateRequest) Validate(now time.Time) error {
	x := &checker{}
	validateCommon(x, r.Currency, r.PlatformAccountID, r.OwnershipType, r.AccountInfo, now)
	return x.err()
}

func validateCommon(x *checker, currency, platformAccountID, ownershipType *string, info *AccountInfo, now time.Time) {
	if platformAccountID != nil {
		x.text("platformAccountId", *platformAccountID, 1, 255)
	}
	if ownershipType != nil && !slices.Contains(OwnershipTypes, *ownershipType) {
		x.add("ownershipType", apierr.Enum, "must be one of %s", strings.Join(OwnershipTypes, ", "))
	}
	validateAccountInfo(x, currency, info, now)
}

// validateAccountInfo checks currency and accountInfo against the account
// type and returns the type's spec (nil when the type is missing or
// unknown).
func validateAccountInfo(x *checker, currency *string, a *AccountInfo, now time.Time) *typeSpec {
	if currency == nil {
		x.add("currency", apierr.Required, "is required")
	}
	if a == nil {
		x.add("accountInfo", apierr.Required, "is required")
		return nil
	}
	if a.AccountType == nil {
		x.add("accountInfo.accountType", apierr.Required, "is required")
		return nil
	}
	spec, ok := specs[*a.AccountType]
	if !ok {
		x.add("accountInfo.accountType", apierr.Enum, "must be one of %s", strings.Join(AccountTypes(), ", "))
		return nil
	}
	if currency != nil && !slices.Contains(spec.currencies, *currency) {
		x.add("currency", apierr.Enum, "a %s account holds %s", spec.accountType, strings.Join(spec.currencies, " or "))
	}
	allowed := map[string]bool{}
	for _, f := range spec.fields {
		allowed[f.name] = true
	}
	for _, name := range infoFields {
		if a.field(name) != nil && !allowed[name] {
			x.add("accountInfo."+name, apierr.AdditionalProperties, "is not a field of %s accounts", spec.accountType)
		}
	}
	for _, f := range spec.fields {
		x.field("accountInfo."+f.name, a.field(f.name), f, spec.accountType)
	}
	if len(spec.anyOf) > 0 {
		present := false
		for _, name := range spec.anyOf {
			present = present || a.field(name) != nil
		}
		if !present {
			x.add("accountInfo."+spec.anyOf[0], apierr.Required, "%s accounts need at least one of %s",
				spec.accountType, strings.Join(spec.anyOf, ", "))
		}
	}
	if spec.extra != nil {
		spec.extra(a, x)
	}
	x.beneficiary(spec, a.Beneficiary, now)
	return spec
}

// field checks one accountInfo field against its spec.
func (x *checker) field(name string, v *string, f fieldSpec, accountType string) {
	if v == nil {
		if f.required {
			x.add(name, apierr.Required, "is required for %s accounts", accountType)
		}
		return
	}
	s := *v
	switch {
	case f.minLen > 0 && len(s) < f.minLen:
		x.add(name, apierr.MinLength, "must be at least %d characters", f.minLen)
	case f.maxLen > 0 && len(s) > f.maxLen:
		x.add(name, apierr.MaxLength, "must be at most %d characters", f.maxLen)
	case f.enum != nil:
		if !slices.Contains(f.enum, s) {
			x.add(name, apierr.Enum, "must be one of %s", strings.Join(f.enum, ", "))
		}
	case f.check != nil:
		if msg := f.check(s); msg != "" {
			x.add(name, f.constraint, "%s", msg)
		}
	default:
		x.printable(name, s)
	}
}

// text checks a free-text value: length in characters and no control
// characters.
func (x *checker) text(name, s string, min, max int) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min:
		x.add(name, apierr.MinLength, "must be at least %d characters", min)
	case n > max:
		x.add(name, apierr.MaxLength, "must be at most %d characters", max)
	default:
		x.printable(name, s)
	}
}

func (x *checker) printable(name, s string) {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		x.add(name, apierr.Pattern, "must not contain control characters")
	}
}

// Beneficiary fields by beneficiary type.
var (
	individualFields = []string{"fullName", "birthDate", "nationality", "email", "phoneNumber", "countryOfResidence", "address"}
	walletIndividual = []string{"fullName", "countryOfResidence"}
	businessFields   = []string{"legalName", "registrationNumber", "taxId", "email", "phoneNumber", "countryOfResidence", "address"}
	beneficiaryNames = []string{"fullName", "birthDate", "nationality", "legalName", "registrationNumber", "taxId", "email",
		"phoneNumber", "countryOfResidence", "documentType", "documentNumber", "address"}
)

func (b *Beneficiary) present(name string) bool {
	switch name {
	case "address":
		return b.Address != nil
	}
	return b.str(name) != nil
}

func (b *Beneficiary) str(name string) *string {
	switch name {
	case "fullName":
		return b.FullName
	case "birthDate":
		return b.BirthDate
	case "nationality":
		return b.Nationality
	case "legalName":
		return b.LegalName
	case "registrationNumber":
		return b.RegistrationNumber
	case "taxId":
		return b.TaxID
	case "email":
		return b.Email
	case "phoneNumber":
		return b.PhoneNumber
	case "countryOfResidence":
		return b.CountryOfResidence
	case "documentType":
		return b.DocumentType
	case "documentNumber":
		return b.DocumentNumber
	}
	return nil
}

// beneficiary checks accountInfo.beneficiary against the type's rule.
func (x *checker) beneficiary(spec *typeSpec, b *Beneficiary, now time.Time) {
	const at = "accountInfo.beneficiary"
	rule := spec.beneficiary
	if rule.none {
		if b != nil {
			x.add(at, apierr.AdditionalProperties, "%s accounts have no beneficiary", spec.accountType)
		}
		return
	}
	if b == nil {
		if !rule.optional {
			x.add(at, apierr.Required, "is required for %s accounts", spec.accountType)
		}
		return
	}
	if b.BeneficiaryType == nil {
		x.add(at+".beneficiaryType", apierr.Required, "is required")
		return
	}
	var allowed, required []string
	switch *b.BeneficiaryType {
	case Individual:
		if rule.optional {
			allowed, required = walletIndividual, walletIndividual
		} else {
			allowed = append(slices.Clone(individualFields), rule.individualExtra...)
			required = append([]string{"fullName"}, rule.individualRequired...)
		}
	case Business:
		allowed, required = businessFields, []string{"legalName"}
	default:
		x.add(at+".beneficiaryType", apierr.Enum, "must be one of %s", strings.Join(BeneficiaryTypes, ", "))
		return
	}
	for _, name := range beneficiaryNames {
		if b.present(name) && !slices.Contains(allowed, name) {
			x.add(at+"."+name, apierr.AdditionalProperties, "is not a field of a %s beneficiary of %s accounts", *b.BeneficiaryType, spec.accountType)
		}
	}
	for _, name := range required {
		if !b.present(name) {
			x.add(at+"."+name, apierr.Required, "is required for a %s beneficiary of %s accounts", *b.BeneficiaryType, spec.accountType)
		}
	}
	for _, name := range allowed {
		p := b.str(name)
		if p == nil {
			continue
		}
		field := at + "." + name
		switch name {
		case "fullName", "legalName":
			x.text(field, *p, 1, 255)
		case "registrationNumber", "taxId", "documentType", "documentNumber":
			x.text(field, *p, 1, 64)
		case "birthDate":
			x.date(field, *p, now)
		case "nationality", "countryOfResidence":
			if msg := Country(*p); msg != "" {
				x.add(field, apierr.Pattern, "%s", msg)
			}
		case "email":
			if msg := Email(*p); msg != "" {
				x.add(field, apierr.Format, "%s", msg)
			}
		case "phoneNumber":
			if msg := Phone(*p, "", 0); msg != "" {
				x.add(field, apierr.Pattern, "%s", msg)
			}
		}
	}
	if b.Address != nil && slices.Contains(allowed, "address") {
		x.address(at+".address", b.Address)
	}
}

func (x *checker) address(at string, a *Address) {
	for name, p := range map[string]*string{"line1": a.Line1, "postalCode": a.PostalCode, "country": a.Country} {
		if p == nil {
			x.add(at+"."+name, apierr.Required, "is required")
		}
	}
	for name, p := range map[string]*string{"line1": a.Line1, "line2": a.Line2, "city": a.City, "state": a.State} {
		if p != nil {
			x.text(at+"."+name, *p, 1, 255)
		}
	}
	if a.PostalCode != nil {
		x.text(at+".postalCode", *a.PostalCode, 1, 32)
	}
	if a.Country != nil {
		if msg := Country(*a.Country); msg != "" {
			x.add(at+".country", apierr.Pattern, "%s", msg)
		}
	}
}

// date checks a YYYY-MM-DD date, not in the future and not before 1900.
func (x *checker) date(field, s string, now time.Time) {
	d, err := time.Parse(time.DateOnly, s)
	switch {
	case err != nil || len(s) != 10:
		x.add(field, apierr.Format, "must be a calendar date YYYY-MM-DD, such as 1990-01-15")
	case d.After(now.UTC()):
		x.add(field, apierr.Format, "must not be in the future")
	case d.Year() < 1900:
		x.add(field, apierr.Format, "must be on or after 1900-01-01")
	}
}

// Validate checks a challenge request.
func (r *ChallengeRequest) Validate() error {
	x := &checker{}
	switch {
	case r.Method == nil:
		x.add("method", apierr.Required, "is required")
	case !slices.Contains(Methods, *r.Method):
		x.add("method", apierr.Enum, "must be one of %s", strings.Join(Methods, ", "))
	}
	return x.err()
}

// Validate checks a verify request.
func (r *VerifyRequest) Validate() error {
	x := &checker{}
	switch {
	case r.Signature == nil:
		x.add("signature", apierr.Required, "is required")
	case *r.Signature == "":
		x.add("signature", apierr.MinLength, "must not be empty")
	case len(*r.Signature) > 1024:
		x.add("signature", apierr.MaxLength, "must be at most 1024 characters")
	}
	if r.SignatureScheme != nil && *r.SignatureScheme != "bip137" && *r.SignatureScheme != "electrum" {
		x.add("signatureScheme", apierr.Enum, "must be one of bip137, electrum")
	}
	return x.err()
}

// Validate checks a trust or untrust confirmation: a one-time code, or a
// passkey assertion with its origin.
func (r *TrustConfirmRequest) Validate() error {
	x := &checker{}
	switch {
	case r.Code != nil:
		if len(*r.Code) != 6 || !allDigits(*r.Code) {
			x.add("code", apierr.Pattern, "must be the 6-digit code")
		}
		if r.PasskeyAssertion != nil || r.Origin != nil {
			x.add("passkeyAssertion", apierr.AdditionalProperties, "send either code or passkeyAssertion with origin, not both")
		}
	case r.PasskeyAssertion != nil || r.Origin != nil:
		if r.PasskeyAssertion == nil {
			x.add("passkeyAssertion", apierr.Required, "is required with origin")
		}
		if r.Origin == nil {
			x.add("origin", apierr.Required, "is required with passkeyAssertion")
		}
	default:
		x.add("code", apierr.Required, "is required (or passkeyAssertion with origin)")
	}
	if r.ChallengeID != nil && *r.ChallengeID == "" {
		x.add("challengeId", apierr.MinLength, "must not be empty")
	}
	return x.err()
}
