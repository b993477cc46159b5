package customers

import (
	"encoding/json"
	"time"
)

// The same types carry a customer's data in requests, in storage (as JSON)
// and in responses. Pointer fields tell "not sent" (nil) from "sent empty",
// and are omitted from responses when unset.

// Address is a postal address (Part A "address").
type Address struct {
	Line1      *string `json:"line1,omitempty"`
	Line2      *string `json:"line2,omitempty"`
	City       *string `json:"city,omitempty"`
	State      *string `json:"state,omitempty"`
	PostalCode *string `json:"postalCode,omitempty"`
	Country    *string `json:"country,omitempty"`
}

// mergeAddress applies the fields set in in (PATCH semantics: absent keeps)
// to *dst, creating it when needed.
func mergeAddress(dst **Address, in *Address) {
	if in == nil {
		return
	}
	if *dst == nil {
		*dst = &Address{}
	}
	a := *dst
	for _, f := range []struct{ dst, src **string }{
		{&a.Line1, &in.Line1}, {&a.Line2, &in.Line2}, {&a.City, &in.City},
		{&a.State, &in.State}, {&a.PostalCode, &in.PostalCode}, {&a.Country, &in.Country},
	} {
		if *f.src != nil {
			v := **f.src
			*f.dst = &v
		}
	}
}

// EDD holds the optional enhanced-due-diligence fields of an individual
// (R-CUST-10). They appear as top-level customer fields.
type EDD struct {
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty"`
	SourceOfFundsOtherDescription    *string  `json:"sourceOfFundsOtherDescription,omitempty"`
	SourceOfWealthCategories         []string `json:"sourceOfWealthCategories,omitempty"`
	SourceOfWealthOtherDescription   *string  `json:"sourceOfWealthOtherDescription,omitempty"`
	PurposeOfAccount                 *string  `json:"purposeOfAccount,omitempty"`
	PurposeOfAccountOtherDescription *string  `json:"purposeOfAccountOtherDescription,omitempty"`
	ExpectedMonthlyTransactionCount  *string  `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume *string  `json:"expectedMonthlyTransactionVolume,omitempty"`
	AnnualIncomeRange                *string  `json:"annualIncomeRange,omitempty"`
	NetWorthRange                    *string  `json:"netWorthRange,omitempty"`
	PepStatus                        *string  `json:"pepStatus,omitempty"`
}

// BusinessInfo describes a business customer (Part A "businessInfo").
type BusinessInfo struct {
	LegalName                        *string  `json:"legalName,omitempty"`
	DoingBusinessAs                  *string  `json:"doingBusinessAs,omitempty"`
	Country                          *string  `json:"country,omitempty"`
	RegistrationNumber               *string  `json:"registrationNumber,omitempty"`
	IncorporatedOn                   *string  `json:"incorporatedOn,omitempty"`
	EntityType                       *string  `json:"entityType,omitempty"`
	TaxID                            *string  `json:"taxId,omitempty"`
	CountriesOfOperation             []string `json:"countriesOfOperation,omitempty"`
	BusinessType                     *string  `json:"businessType,omitempty"`
	NaicsCode                        *string  `json:"naicsCode,omitempty"`
	PurposeOfAccount                 *string  `json:"purposeOfAccount,omitempty"`
	PurposeOfAccountOtherDescription *string  `json:"purposeOfAccountOtherDescription,omitempty"`
	SourceOfFunds                    *string  `json:"sourceOfFunds,omitempty"`
	SourceOfFundsCategories          []string `json:"sourceOfFundsCategories,omitempty"`
	SourceOfFundsOtherDescription    *string  `json:"sourceOfFundsOtherDescription,omitempty"`
	ExpectedMonthlyTransactionCount  *string  `json:"expectedMonthlyTransactionCount,omitempty"`
	ExpectedMonthlyTransactionVolume *string  `json:"expectedMonthlyTransactionVolume,omitempty"`
	ExpectedRecipientJurisdictions   []string `json:"expectedRecipientJurisdictions,omitempty"`
	ExpectedCounterpartyCountries    []string `json:"expectedCounterpartyCountries,omitempty"`
	PrimaryContactFirstName          *string  `json:"primaryContactFirstName,omitempty"`
	PrimaryContactLastName           *string  `json:"primaryContactLastName,omitempty"`
}

// Profile is a customer's own data: everything a platform sends about the
// customer except its identity, agreements and verification state.
type Profile struct {
	FullName          *string  `json:"fullName,omitempty"`
	BirthDate         *string  `json:"birthDate,omitempty"`
	Nationality       *string  `json:"nationality,omitempty"`
	IDType            *string  `json:"idType,omitempty"`
	Identifier        *string  `json:"identifier,omitempty"`
	CountryOfIssuance *string  `json:"countryOfIssuance,omitempty"`
	Address           *Address `json:"address,omitempty"`
	Email             *string  `json:"email,omitempty"`
	PhoneNumber       *string  `json:"phoneNumber,omitempty"`
	// UmaAddress is the customer's UMA address under the platform's UMA
	// domain ($user@domain); the uma capability reserves it.
	UmaAddress   *string       `json:"umaAddress,omitempty"`
	Region       *string       `json:"region,omitempty"`
	Currencies   []string      `json:"currencies,omitempty"`
	BusinessInfo *BusinessInfo `json:"businessInfo,omitempty"`
	EDD
}

// Customer is the API representation of a customer.
type Customer struct {
	ID                 string  `json:"id"`
	PlatformCustomerID string  `json:"platformCustomerId"`
	CustomerType       string  `json:"customerType"`
	KycStatus          string  `json:"kycStatus,omitempty"`
	KybStatus          string  `json:"kybStatus,omitempty"`
	RegistrationNumber *string `json:"registrationNumber,omitempty"`
	Profile
	// ContactVerification is present only for customers whose provider
	// verifies email and phone before KYC.
	ContactVerification *ContactVerification `json:"contactVerification,omitempty"`
	AgreementConsents   []AgreementConsent   `json:"agreementConsents"`
	// EndUserTermsConsent is the deprecated view of the end-user-terms
	// entry of AgreementConsents, present once it is recorded.
	EndUserTermsConsent *EndUserTermsConsent `json:"endUserTermsConsent,omitempty"`
	IsDeleted           bool                 `json:"isDeleted"`
	// ScaRequired tells whether the customer needs strong customer
	// authentication (package sca; set by the HTTP layer, which knows the
	// platform's SCA settings).
	ScaRequired *bool     `json:"scaRequired,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Status returns the customer's kycStatus or kybStatus.
func (c Customer) Status() string {
	if c.CustomerType == Business {
		return c.KybStatus
	}
	return c.KycStatus
}

// Contact verification channel states.
const (
	ContactPending  = "PENDING"
	ContactVerified = "VERIFIED"
)

// ContactVerification reports each channel the customer's provider requires.
type ContactVerification struct {
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
}

// AgreementConsent is one accepted agreement (R-CUST-11).
type AgreementConsent struct {
	Type             string    `json:"type"`
	AcceptedAt       time.Time `json:"acceptedAt"`
	IPAddress        string    `json:"ipAddress"`
	TermsVersion     string    `json:"termsVersion"`
	AcceptanceMethod string    `json:"acceptanceMethod"`
}

// EndUserTermsConsent is the deprecated single-agreement form (R-CUST-13).
type EndUserTermsConsent struct {
	AcceptedAt       time.Time `json:"acceptedAt"`
	IPAddress        string    `json:"ipAddress"`
	TermsVersion     string    `json:"termsVersion"`
	AcceptanceMethod string    `json:"acceptanceMethod"`
}

// PersonalInfo describes a beneficial owner.
type PersonalInfo struct {
	FirstName         *string  `json:"firstName,omitempty"`
	MiddleName        *string  `json:"middleName,omitempty"`
	LastName          *string  `json:"lastName,omitempty"`
	BirthDate         *string  `json:"birthDate,omitempty"`
	Nationality       *string  `json:"nationality,omitempty"`
	Email             *string  `json:"email,omitempty"`
	PhoneNumber       *string  `json:"phoneNumber,omitempty"`
	Address           *Address `json:"address,omitempty"`
	IDType            *string  `json:"idType,omitempty"`
	Identifier        *string  `json:"identifier,omitempty"`
	CountryOfIssuance *string  `json:"countryOfIssuance,omitempty"`
}

// BeneficialOwner is the API representation of a beneficial owner.
type BeneficialOwner struct {
	ID                  string       `json:"id"`
	CustomerID          string       `json:"customerId"`
	Roles               []string     `json:"roles"`
	OwnershipPercentage int          `json:"ownershipPercentage"`
	PersonalInfo        PersonalInfo `json:"personalInfo"`
	KycStatus           string       `json:"kycStatus"`
	CreatedAt           time.Time    `json:"createdAt"`
	UpdatedAt           time.Time    `json:"updatedAt"`
}

// VerificationError is one problem a verification found (R-CUST-27). Every
// key is always present: Field is empty unless a field is at fault, and
// AcceptedDocumentTypes is empty unless a document would fix the problem.
type VerificationError struct {
	ResourceID            string   `json:"resourceId"`
	Type                  string   `json:"type"`
	Field                 string   `json:"field"`
	Reason                string   `json:"reason"`
	AcceptedDocumentTypes []string `json:"acceptedDocumentTypes"`
}

// Verification is the API representation of a verification (R-CUST-26).
type Verification struct {
	ID                 string              `json:"id"`
	CustomerID         string              `json:"customerId"`
	VerificationStatus string              `json:"verificationStatus"`
	Errors             []VerificationError `json:"errors"`
	CreatedAt          time.Time           `json:"createdAt"`
	UpdatedAt          time.Time           `json:"updatedAt"`
}

// Document is the metadata of a verification document.
type Document struct {
	ID             string    `json:"id"`
	DocumentHolder string    `json:"documentHolder"`
	DocumentType   string    `json:"documentType"`
	Country        string    `json:"country,omitempty"`
	Side           string    `json:"side,omitempty"`
	IssuedOn       *string   `json:"issuedOn,omitempty"`
	FileName       string    `json:"fileName,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

// clone deep-copies v through JSON (profiles are small and plain data).
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic("customers: clone: " + err.Error())
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic("customers: clone: " + err.Error())
	}
	return out
}
