package id

// PaymentDocument is a supporting document uploaded for a payout that needs
// one (POST /payment-documents; R-CONV-02). Verification (KYC/KYB)
// documents are another type (Document).
const PaymentDocument = "PaymentDocument"
