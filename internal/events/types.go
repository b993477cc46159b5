package events

// Event types, named as Part B "Events" names them. Receivers must tolerate
// types they do not know (R-VER-02), so adding one is backwards compatible.
//
// Where the spec gives a form rather than a list (OUTGOING_PAYMENT.<STATUS>,
// CARD_TRANSACTION.*), the constants cover the statuses Part A names and the
// functions below build the name for any status, so a capability never spells
// a type by hand.
const (
	// An outgoing transaction changed status; data is the transaction
	// (R-TXN-43). Statuses from Part A "Quote and outgoing transaction".
	OutgoingPaymentPending              = "OUTGOING_PAYMENT.PENDING"
	OutgoingPaymentPendingAuthorization = "OUTGOING_PAYMENT.PENDING_AUTHORIZATION"
	OutgoingPaymentProcessing           = "OUTGOING_PAYMENT.PROCESSING"
	OutgoingPaymentCompleted            = "OUTGOING_PAYMENT.COMPLETED"
	OutgoingPaymentFailed               = "OUTGOING_PAYMENT.FAILED"
	OutgoingPaymentExpired              = "OUTGOING_PAYMENT.EXPIRED"

	// Refund progress after a failed outgoing transaction (R-TXN-44).
	OutgoingPaymentRefundPending   = "OUTGOING_PAYMENT.REFUND_PENDING"
	OutgoingPaymentRefundCompleted = "OUTGOING_PAYMENT.REFUND_COMPLETED"
	OutgoingPaymentRefundFailed    = "OUTGOING_PAYMENT.REFUND_FAILED"

	// An incoming transaction changed status. Part B names FAILED (R-TXN-45);
	// PENDING and COMPLETED follow the same form (a dishonored return moves
	// FAILED back to COMPLETED, Part A).
	IncomingPaymentPending   = "INCOMING_PAYMENT.PENDING"
	IncomingPaymentCompleted = "INCOMING_PAYMENT.COMPLETED"
	IncomingPaymentFailed    = "INCOMING_PAYMENT.FAILED"

	// Refund of an incoming payment (R-TXN-46).
	IncomingPaymentRefundPending   = "INCOMING_PAYMENT.REFUND_PENDING"
	IncomingPaymentRefundCompleted = "INCOMING_PAYMENT.REFUND_COMPLETED"
	IncomingPaymentRefundFailed    = "INCOMING_PAYMENT.REFUND_FAILED"

	// Every card transaction transition, carrying the full card transaction
	// (R-CARD-53). A return re-fires SETTLED; REFUNDED is never sent
	// (R-CARD-54). Statuses from Part A "Card transactions".
	CardTransactionSettled   = "CARD_TRANSACTION.SETTLED"
	CardTransactionDeclined  = "CARD_TRANSACTION.DECLINED"
	CardTransactionVoided    = "CARD_TRANSACTION.VOIDED"
	CardTransactionException = "CARD_TRANSACTION.EXCEPTION"

	// Each successful card status transition, not a fundingSource change
	// (R-CARD-09, R-CARD-10). Lower case, as the spec writes it.
	CardStatusChange = "card.status_change"

	// Outcome of an external account's ownership verification (R-EACCT-16).
	ExternalAccountStatusUpdated = "EXTERNAL_ACCOUNT.STATUS_UPDATED"

	// Customer verification status changes (R-CUST-39): one type per
	// kycStatus (individuals) and kybStatus (businesses) value.
	CustomerKYCUnverified = "CUSTOMER.KYC_UNVERIFIED"
	CustomerKYCPending    = "CUSTOMER.KYC_PENDING"
	CustomerKYCApproved   = "CUSTOMER.KYC_APPROVED"
	CustomerKYCRejected   = "CUSTOMER.KYC_REJECTED"
	CustomerKYBUnverified = "CUSTOMER.KYB_UNVERIFIED"
	CustomerKYBPending    = "CUSTOMER.KYB_PENDING"
	CustomerKYBApproved   = "CUSTOMER.KYB_APPROVED"
	CustomerKYBRejected   = "CUSTOMER.KYB_REJECTED"

	// An invitation was claimed (R-INV-05).
	InvitationClaimed = "INVITATION_CLAIMED"

	// A PROCESSING embedded-wallet operation completed (R-IACCT-15).
	WalletOperationCompleted = "wallet_operation.completed"

	// A stablecoin issuer operation (mint or burn) changed status; data is
	// the operation. Types: STABLECOIN_OPERATION.<STATUS> (PENDING_FUNDING,
	// PENDING_PROVIDER, PROCESSING, COMPLETED, FAILED, EXPIRED).
	StablecoinOperationCompleted = "STABLECOIN_OPERATION.COMPLETED"

	// Sent by POST /sandbox/webhooks/test.
	Test = "TEST"
)

// OutgoingPayment is the type for an outgoing transaction entering status.
func OutgoingPayment(status string) string { return "OUTGOING_PAYMENT." + status }

// IncomingPayment is the type for an incoming transaction entering status.
func IncomingPayment(status string) string { return "INCOMING_PAYMENT." + status }

// CardTransaction is the type for a card transaction entering status.
func CardTransaction(status string) string { return "CARD_TRANSACTION." + status }

// CustomerKYC is the type for an individual's kycStatus becoming status.
func CustomerKYC(status string) string { return "CUSTOMER.KYC_" + status }

// CustomerKYB is the type for a business's kybStatus becoming status.
func CustomerKYB(status string) string { return "CUSTOMER.KYB_" + status }

// StablecoinOperation is the type for a stablecoin operation entering status.
func StablecoinOperation(status string) string { return "STABLECOIN_OPERATION." + status }
