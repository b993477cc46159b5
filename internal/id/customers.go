package id

// Resource type prefixes of the customers capability (customers, KYC/KYB
// verification, beneficial owners and their verification documents).
const (
	Customer        = "Customer"
	BeneficialOwner = "BeneficialOwner"
	Verification    = "Verification"
	// Document is a verification (KYC/KYB) document held by a customer or a
	// beneficial owner. Payment documents are another type (PaymentDocument).
	Document = "Document"
)
