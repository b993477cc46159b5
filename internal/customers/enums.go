package customers

import (
	"slices"
	"strings"
)

// Customer types (R-CUST-04).
const (
	Individual = "INDIVIDUAL"
	Business   = "BUSINESS"
)

// CustomerTypes is the customerType enumeration.
var CustomerTypes = []string{Individual, Business}

// Verification statuses of a customer: kycStatus for individuals, kybStatus
// for businesses (R-CUST-06). APPROVED and REJECTED are final (R-CUST-29).
const (
	StatusUnverified = "UNVERIFIED"
	StatusPending    = "PENDING"
	StatusApproved   = "APPROVED"
	StatusRejected   = "REJECTED"
)

// Statuses is the kycStatus/kybStatus enumeration.
var Statuses = []string{StatusUnverified, StatusPending, StatusApproved, StatusRejected}

// Final reports whether a status can no longer change.
func Final(status string) bool { return status == StatusApproved || status == StatusRejected }

// Outcomes of POST /verifications (R-CUST-28).
const (
	VerificationResolveErrors       = "RESOLVE_ERRORS"
	VerificationPendingManualReview = "PENDING_MANUAL_REVIEW"
	VerificationApproved            = "APPROVED"
	VerificationRejected            = "REJECTED"
)

// VerificationStatuses is the verificationStatus enumeration.
var VerificationStatuses = []string{VerificationResolveErrors, VerificationPendingManualReview, VerificationApproved, VerificationRejected}

// Types of verification errors entries (R-CUST-27).
const (
	ErrMissingField             = "MISSING_FIELD"
	ErrInvalidField             = "INVALID_FIELD"
	ErrMissingIdentityDocument  = "MISSING_IDENTITY_DOCUMENT"
	ErrPoorQualityDocument      = "POOR_QUALITY_DOCUMENT"
	ErrMissingLegalPresenceDoc  = "MISSING_LEGAL_PRESENCE_DOCUMENT"
	ErrMissingOwnershipDoc      = "MISSING_OWNERSHIP_STRUCTURE_DOCUMENT"
	ErrMissingProofOfAddressDoc = "MISSING_PROOF_OF_ADDRESS_DOCUMENT"
	ErrMissingTaxIDDocument     = "MISSING_TAX_ID_DOCUMENT"
	ErrExpiredDocument          = "EXPIRED_DOCUMENT"
	ErrMissingBeneficialOwner   = "MISSING_BENEFICIAL_OWNER"
	ErrMissingControlPerson     = "MISSING_CONTROL_PERSON"
)

// Identification types (Part A "idType"; the seen values plus EIN).
var IDTypes = []string{"SSN", "ITIN", "EIN", "NON_US_TAX_ID"}

// Verification document types, grouped by what they prove.
var (
	IdentityDocuments       = []string{"PASSPORT", "DRIVERS_LICENSE", "NATIONAL_ID"}
	FormationDocuments      = []string{"CERTIFICATE_OF_INCORPORATION", "ARTICLES_OF_INCORPORATION", "ARTICLES_OF_ASSOCIATION", "STATE_REGISTRY_EXCERPT"}
	OwnershipDocuments      = []string{"SHAREHOLDER_REGISTER", "TRUST_AGREEMENT", "PARTNERSHIP_AGREEMENT"}
	ProofOfAddressDocuments = []string{"UTILITY_BILL", "ELECTRICITY_BILL", "RENT_OR_LEASE_AGREEMENT", "BANK_STATEMENT", "TAX_RETURN"}
	TaxIDDocuments          = []string{"TAX_ID_CERTIFICATE", "TAX_RETURN"}
	// DocumentTypes is every accepted documentType.
	DocumentTypes = uniq(slices.Concat(IdentityDocuments, FormationDocuments, OwnershipDocuments,
		ProofOfAddressDocuments, TaxIDDocuments, []string{"DIRECTOR_REGISTRY", "POWER_OF_ATTORNEY", "SELFIE", "OTHER"}))
	DocumentSides = []string{"FRONT", "BACK"}
)

// Roles of a beneficial owner. CONTROL_PERSON marks the one person who
// controls the business (R-CUST-32).
var OwnerRoles = []string{"UBO", "DIRECTOR", "COMPANY_OFFICER", "CONTROL_PERSON", "TRUSTEE", "GENERAL_PARTNER"}

// RoleControlPerson is the role a business's control person holds.
const RoleControlPerson = "CONTROL_PERSON"

// Enhanced due diligence and business profile enumerations (R-CUST-10).
var (
	IndividualSourcesOfFunds = []string{"SALARY", "SELF_EMPLOYMENT_INCOME", "INVESTMENT_INCOME", "PENSION", "RENTAL_INCOME",
		"GIFT", "INHERITANCE", "LOAN", "SAVINGS", "SALE_OF_ASSETS", "OTHER"}
	SourcesOfWealth = []string{"SALARY", "BUSINESS_INCOME", "INVESTMENTS", "INHERITANCE", "PROPERTY_SALE", "GIFT",
		"RETIREMENT", "SAVINGS", "OTHER"}
	PurposesOfAccount = []string{"CONTRACTOR_PAYOUTS", "CREATOR_PAYOUTS", "EMPLOYEE_PAYOUTS", "MARKETPLACE_SELLER_PAYOUTS",
		"SUPPLIER_PAYMENTS", "CROSS_BORDER_B2B", "AR_AUTOMATION", "AP_AUTOMATION", "EMBEDDED_PAYMENTS",
		"PLATFORM_FEE_COLLECTION", "P2P_TRANSFERS", "CHARITABLE_DONATIONS", "OTHER"}
	TransactionCounts  = []string{"COUNT_UNDER_10", "COUNT_10_TO_100", "COUNT_100_TO_500", "COUNT_500_TO_1000", "COUNT_OVER_1000"}
	TransactionVolumes = []string{"VOLUME_UNDER_10K", "VOLUME_10K_TO_100K", "VOLUME_100K_TO_1M", "VOLUME_1M_TO_10M", "VOLUME_OVER_10M"}
	IncomeRanges       = []string{"UNDER_50K", "RANGE_50K_100K", "RANGE_100K_250K", "RANGE_250K_1M", "OVER_1M"}
	NetWorthRanges     = []string{"UNDER_100K", "RANGE_100K_500K", "RANGE_500K_1M", "RANGE_1M_5M", "RANGE_5M_25M", "OVER_25M"}
	PepStatuses        = []string{"NONE", "DOMESTIC", "FOREIGN", "HIO", "FAMILY_OR_ASSOCIATE"}
	EntityTypes        = []string{"SOLE_PROPRIETORSHIP", "PARTNERSHIP", "LLC", "CORPORATION", "S_CORPORATION", "NON_PROFIT",
		"PUBLICLY_LISTED_COMPANY", "TRUST", "PRIVATE_FOUNDATION", "CHARITY", "OTHER"}
	BusinessTypes = []string{"AGRICULTURE_FORESTRY_FISHING_AND_HUNTING", "MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION",
		"UTILITIES", "CONSTRUCTION", "MANUFACTURING", "WHOLESALE_TRADE", "RETAIL_TRADE", "TRANSPORTATION_AND_WAREHOUSING",
		"INFORMATION", "FINANCE_AND_INSURANCE", "REAL_ESTATE_AND_RENTAL_AND_LEASING",
		"PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES", "MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES",
		"ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES", "EDUCATIONAL_SERVICES",
		"HEALTH_CARE_AND_SOCIAL_ASSISTANCE", "ARTS_ENTERTAINMENT_AND_RECREATION", "ACCOMMODATION_AND_FOOD_SERVICES",
		"OTHER_SERVICES", "PUBLIC_ADMINISTRATION"}
	BusinessSourcesOfFunds = []string{"OPERATING_REVENUE", "INVESTMENT_INCOME", "LOANS", "VENTURE_CAPITAL",
		"PERSONAL_SAVINGS", "DONATIONS", "OTHER"}
)

// countries are the ISO 3166-1 alpha-2 codes.
var countries = map[string]bool{}

// eea are the countries of the European Economic Area: customers there are
// served by a provider that verifies email and phone before KYC.
var eea = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM
		BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE
		EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID
		IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC
		MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF
		PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY
		SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`) {
		countries[c] = true
	}
	for _, c := range strings.Fields(`AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO`) {
		eea[c] = true
	}
}

// IsCountry reports whether c is an ISO 3166-1 alpha-2 code.
func IsCountry(c string) bool { return countries[c] }

func uniq(list []string) []string {
	out := []string{}
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
