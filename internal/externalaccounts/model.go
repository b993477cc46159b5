package externalaccounts

import "time"

// Statuses of an external account (Part A "External account ownership
// verification"; R-EACCT-06).
const (
	StatusActive                       = "ACTIVE"
	StatusPendingOwnershipVerification = "PENDING_OWNERSHIP_VERIFICATION"
	StatusUnverified                   = "UNVERIFIED"
)

// Ownership types.
const (
	FirstParty = "FIRST_PARTY"
	ThirdParty = "THIRD_PARTY"
)

// Ownership verification methods.
const (
	MethodWalletSignature = "WALLET_SIGNATURE"
	MethodLiveness        = "LIVENESS"
)

// Bank-account validation statuses of US accounts.
const (
	ValidationPending   = "PENDING"
	ValidationValidated = "VALIDATED"
	ValidationFailed    = "FAILED"
)

// Beneficiary types.
const (
	Individual = "INDIVIDUAL"
	Business   = "BUSINESS"
)

// Statuses, OwnershipTypes, Methods and BeneficiaryTypes are the allowed
// values of those enums.
var (
	Statuses         = []string{StatusActive, StatusPendingOwnershipVerification, StatusUnverified}
	OwnershipTypes   = []string{FirstParty, ThirdParty}
	Methods          = []string{MethodWalletSignature, MethodLiveness}
	BeneficiaryTypes = []string{Individual, Business}
	BankAccountTypes = []string{"CHECKING", "SAVINGS"}
)

// Address is a beneficiary's postal address.
type Address struct {
	Line1      *string `json:"line1,omitempty"`
	Line2      *string `json:"line2,omitempty"`
	City       *string `json:"city,omitempty"`
	State      *string `json:"state,omitempty"`
	PostalCode *string `json:"postalCode,omitempty"`
	Country    *string `json:"country,omitempty"`
}

// Beneficiary is the person or business that owns an account. Which fields
// apply depends on beneficiaryType and the account type (see types.go).
type Beneficiary struct {
	BeneficiaryType    *string  `json:"beneficiaryType,omitempty"`
	FullName           *string  `json:"fullName,omitempty"`
	BirthDate          *string  `json:"birthDate,omitempty"`
	Nationality        *string  `json:"nationality,omitempty"`
	LegalName          *string  `json:"legalName,omitempty"`
	RegistrationNumber *string  `json:"registrationNumber,omitempty"`
	TaxID              *string  `json:"taxId,omitempty"`
	Email              *string  `json:"email,omitempty"`
	PhoneNumber        *string  `json:"phoneNumber,omitempty"`
	CountryOfResidence *string  `json:"countryOfResidence,omitempty"`
	DocumentType       *string  `json:"documentType,omitempty"`
	DocumentNumber     *string  `json:"documentNumber,omitempty"`
	Address            *Address `json:"address,omitempty"`
}

// AccountInfo is the union of every account type's fields; accountType
// decides which of them are allowed and required (types.go). Strict decoding
// rejects names outside the union, validation names outside the type.
type AccountInfo struct {
	AccountType *string `json:"accountType,omitempty"`

	// Bank accounts.
	AccountNumber             *string `json:"accountNumber,omitempty"`
	RoutingNumber             *string `json:"routingNumber,omitempty"`
	BankAccountType           *string `json:"bankAccountType,omitempty"`
	BankName                  *string `json:"bankName,omitempty"`
	IntermediaryBankName      *string `json:"intermediaryBankName,omitempty"`
	IntermediaryRoutingNumber *string `json:"intermediaryRoutingNumber,omitempty"`
	FiToFiInformation         *string `json:"fiToFiInformation,omitempty"`
	IBAN                      *string `json:"iban,omitempty"`
	SwiftCode                 *string `json:"swiftCode,omitempty"`
	ClabeNumber               *string `json:"clabeNumber,omitempty"`
	PixKey                    *string `json:"pixKey,omitempty"`
	PixKeyType                *string `json:"pixKeyType,omitempty"`
	TaxID                     *string `json:"taxId,omitempty"`
	SortCode                  *string `json:"sortCode,omitempty"`
	BankCode                  *string `json:"bankCode,omitempty"`
	BranchCode                *string `json:"branchCode,omitempty"`
	VPA                       *string `json:"vpa,omitempty"`
	IFSC                      *string `json:"ifsc,omitempty"`
	Rail                      *string `json:"rail,omitempty"`
	PhoneNumber               *string `json:"phoneNumber,omitempty"`
	Provider                  *string `json:"provider,omitempty"`
	Region                    *string `json:"region,omitempty"`
	Country                   *string `json:"country,omitempty"`

	// Wallets.
	Address  *string `json:"address,omitempty"`
	VaspName *string `json:"vaspName,omitempty"`

	// Lightning.
	Invoice          *string `json:"invoice,omitempty"`
	Bolt12           *string `json:"bolt12,omitempty"`
	LightningAddress *string `json:"lightningAddress,omitempty"`

	Beneficiary *Beneficiary `json:"beneficiary,omitempty"`
}

// CreateRequest is the body of POST /customers/external-accounts.
type CreateRequest struct {
	CustomerID               *string      `json:"customerId"`
	Currency                 *string      `json:"currency"`
	PlatformAccountID        *string      `json:"platformAccountId"`
	OwnershipType            *string      `json:"ownershipType"`
	DefaultUmaDepositAccount *bool        `json:"defaultUmaDepositAccount"`
	AccountInfo              *AccountInfo `json:"accountInfo"`
}

// PlatformCreateRequest is the body of POST /platform/external-accounts:
// the same without customerId and defaultUmaDepositAccount.
type PlatformCreateRequest struct {
	Currency          *string      `json:"currency"`
	PlatformAccountID *string      `json:"platformAccountId"`
	OwnershipType     *string      `json:"ownershipType"`
	AccountInfo       *AccountInfo `json:"accountInfo"`
}

// ExternalAccount is the API resource.
type ExternalAccount struct {
	ID                       string    `json:"id"`
	CustomerID               string    `json:"customerId,omitempty"`
	Status                   string    `json:"status"`
	PlatformAccountID        string    `json:"platformAccountId"`
	OwnershipType            string    `json:"ownershipType,omitempty"`
	Currency                 string    `json:"currency"`
	DefaultUmaDepositAccount *bool     `json:"defaultUmaDepositAccount,omitempty"`
	BankAccountValidation    string    `json:"bankAccountValidationStatus,omitempty"`
	Trusted                  *bool     `json:"trusted,omitempty"`
	AccountInfo              infoOut   `json:"accountInfo"`
	CreatedAt                time.Time `json:"createdAt"`
	UpdatedAt                time.Time `json:"updatedAt"`
}

// infoOut is accountInfo as answered: as stored, plus the rails a US account
// is reachable on.
type infoOut struct {
	AccountInfo
	PaymentRails []string `json:"paymentRails,omitempty"`
}

// ChallengeRequest is the body of POST …/{externalAccountId}/challenge.
type ChallengeRequest struct {
	Method *string `json:"method"`
}

// Challenge is an ownership verification challenge. Exactly one of
// MessageToSign (WALLET_SIGNATURE) and LivenessToken (LIVENESS) is set; the
// HTTP layer turns the token into verificationLink.
type Challenge struct {
	Method        string
	MessageToSign string
	LivenessToken string
	ExpiresAt     time.Time
}

// VerifyRequest is the body of POST …/{externalAccountId}/verify.
type VerifyRequest struct {
	Signature *string `json:"signature"`
	// SignatureScheme selects a Bitcoin message format; no account type
	// here signs Bitcoin messages, so it is checked and ignored.
	SignatureScheme *string `json:"signatureScheme"`
}

// TrustConfirmRequest is the body of …/trust/confirm and …/untrust/confirm.
type TrustConfirmRequest struct {
	ChallengeID      *string        `json:"challengeId"`
	Code             *string        `json:"code"`
	PasskeyAssertion map[string]any `json:"passkeyAssertion"`
	Origin           *string        `json:"origin"`
}

// ScaChallenge is the strong customer authentication a trust change waits on.
type ScaChallenge struct {
	ID               string    `json:"id"`
	ExpiresAt        time.Time `json:"expiresAt"`
	Factor           string    `json:"factor"`
	AvailableFactors []string  `json:"availableFactors"`
	Purpose          string    `json:"purpose,omitempty"`
}

// TrustStart answers …/trust and …/untrust.
type TrustStart struct {
	ScaChallenge *ScaChallenge `json:"scaChallenge,omitempty"`
}

// TrustConfirm answers the confirm calls.
type TrustConfirm struct {
	Trusted bool `json:"trusted"`
}
