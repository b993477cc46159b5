package id

// Resource type prefixes of KYC documents, hosted KYC links and bulk
// customer imports. (Verification documents themselves are Document, in
// customers.go.)
const (
	// BulkImportJob is a bulk customer import (POST /customers/bulk/csv).
	BulkImportJob = "Job"
	// KycLink is a hosted KYC link (POST /customers/{customerId}/kyc-link).
	KycLink = "KycLink"
)
