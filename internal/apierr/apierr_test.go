package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// R-ERR-07..R-ERR-22: every code the spec lists maps to its status.
func TestCatalog_MatchesSpec(t *testing.T) {
	want := map[int][]string{
		400: {"INVALID_INPUT", "INVALID_REQUEST_FORMAT", "INVALID_AMOUNT", "INVALID_CURRENCY", "INVALID_TIMESTAMP", "INVALID_NONCE",
			"MISSING_MANDATORY_USER_INFO", "END_USER_TERMS_VERSION_NOT_FOUND", "WEBHOOK_ENDPOINT_NOT_SET", "WEBHOOK_DELIVERY_ERROR",
			"INVALID_UMA_ADDRESS", "INVALID_RECEIVER", "PARSE_PAYREQ_RESPONSE_ERROR", "PARSE_LNURLP_RESPONSE_ERROR", "CERT_CHAIN_INVALID",
			"CERT_CHAIN_EXPIRED", "INVALID_PUBKEY_FORMAT", "MISSING_REQUIRED_UMA_PARAMETERS", "SENDER_NOT_ACCEPTED",
			"INVITATION_ALREADY_CLAIMED", "INVITATIONS_NOT_CONFIGURED", "INVITATION_CANCELLED", "AMOUNT_OUT_OF_RANGE",
			"TRANSACTION_SIZE_LIMIT_EXCEEDED", "INVALID_BANK_ACCOUNT", "SELF_PAYMENT", "EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED",
			"INSUFFICIENT_FUNDS", "QUOTE_EXPIRED", "QUOTE_RATE_UNAVAILABLE", "DOCUMENTS_REQUIRED", "CARDHOLDER_KYC_NOT_APPROVED",
			"LOW_QUALITY", "DATA_MISMATCH", "EXPIRED", "SUSPECTED_FRAUD", "UNSUITABLE_DOCUMENT", "INCOMPLETE",
			"EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS", "SMS_OTP_CREDENTIAL_ALREADY_EXISTS", "PASSKEY_CREDENTIAL_ALREADY_EXISTS",
			"AUTH_CREDENTIAL_VERIFICATION_REQUIRED", "AUTH_CREDENTIAL_VERIFICATION_EXPIRED"},
		401: {"UNAUTHORIZED", "INVALID_SIGNATURE", "WALLET_SIGNATURE_MISSING", "WALLET_SIGNATURE_MALFORMED",
			"WALLET_SIGNATURE_BODY_MISMATCH", "WALLET_SIGNATURE_INVALID", "REQUEST_ID_MISSING"},
		403: {"FORBIDDEN"},
		404: {"TRANSACTION_NOT_FOUND", "QUOTE_NOT_FOUND", "LOOKUP_REQUEST_NOT_FOUND", "REFERENCE_NOT_FOUND", "UMA_NOT_FOUND",
			"USER_NOT_FOUND", "PAYMENT_URL_NOT_FOUND", "PAYMENT_DOCUMENT_NOT_FOUND", "ACCOUNT_NOT_FOUND", "INVITATION_NOT_FOUND",
			"TOKEN_NOT_FOUND", "BULK_UPLOAD_JOB_NOT_FOUND", "AUTH_METHOD_NOT_FOUND", "CUSTOMER_NOT_FOUND", "DOCUMENT_HOLDER_NOT_FOUND",
			"NOT_FOUND", "PLATFORM_NOT_FOUND", "REQUEST_NOT_FOUND", "SESSION_NOT_FOUND", "VERIFICATION_NOT_FOUND",
			"STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND", "STABLECOIN_EXTERNAL_ACCOUNT_NOT_FOUND", "STABLECOIN_NOT_FOUND",
			"STABLECOIN_OPERATION_NOT_FOUND"},
		409: {"TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", "TRANSACTION_NOT_CANCELLABLE", "BENEFICIARY_TRUSTED",
			"BANK_ACCOUNT_VALIDATION_PENDING", "DUPLICATE_EXTERNAL_ACCOUNT", "DUPLICATE_PAY_REQUEST", "UMA_ADDRESS_EXISTS",
			"SCA_SESSION_REQUIRED", "NOT_YET_AVAILABLE", "CONFLICT", "DOCUMENT_ALREADY_EXISTS", "OPERATION_IN_PROGRESS",
			"WALLET_NOT_PROVISIONED", "PAYMENT_DOCUMENT_ALREADY_USED", "INVALID_STATE_TRANSITION", "CARD_ALREADY_CLOSED",
			"CARD_NOT_MUTABLE", "PIN_CHANGE_REQUIRED", "CARD_LIMIT_REACHED", "EMAIL_OTP_EMAIL_ALREADY_EXISTS",
			"EMAIL_OTP_CREDENTIAL_SET_CHANGED", "SMS_OTP_CREDENTIAL_SET_CHANGED", "SMS_OTP_PHONE_NUMBER_ALREADY_EXISTS",
			"PASSKEY_ALREADY_ENROLLED", "STABLECOIN_GRID_ENABLEMENT_NOT_REQUESTABLE", "STABLECOIN_SYMBOL_ALREADY_EXISTS",
			"STABLECOIN_TOKEN_IDENTIFIER_ALREADY_EXISTS"},
		410: {"PAYMENT_DOCUMENT_EXPIRED"},
		423: {"ACCOUNT_LOCKED"},
		424: {"PAYMENT_DOCUMENT_ATTACHMENT_FAILED"},
		429: {"RATE_LIMITED", "DAILY_VOLUME_LIMIT_EXCEEDED"},
		500: {"GRID_SWITCH_ERROR", "INTERNAL_ERROR"},
		502: {"INVALID_PAYREQ_RESPONSE", "COUNTERPARTY_SERVER_ERROR"},
		504: {"LOOKUP_REQUEST_FAILED", "QUOTE_REQUEST_FAILED"},
	}
	for status, codes := range want {
		for _, c := range codes {
			t.Run(fmt.Sprintf("%d_%s", status, c), func(t *testing.T) {
				if got, ok := StatusOf(c); !ok || got != status {
					t.Fatalf("%s: status %d (%v), want %d", c, got, ok, status)
				}
				if e := New(c, "r"); e.Status != status || e.Code != c {
					t.Fatalf("%+v", e)
				}
			})
		}
	}
}

func TestUnknownCodeIs500(t *testing.T) {
	if e := New("NO_SUCH_CODE", "r"); e.Status != http.StatusInternalServerError {
		t.Fatal(e.Status)
	}
}

func TestFrom_Unwraps(t *testing.T) {
	e := New(CodeConflict, "x")
	if got, ok := From(fmt.Errorf("wrapped: %w", e)); !ok || got != e {
		t.Fatal("From must see through wrapping")
	}
	if _, ok := From(errors.New("plain")); ok {
		t.Fatal("plain errors are not client-safe")
	}
}

// R-ERR-02, R-ERR-03: one entry per invalid field, with field, constraint and message.
func TestFields_R_ERR_02(t *testing.T) {
	var f Fields
	if f.Err() != nil {
		t.Fatal("no failures, no error")
	}
	f.Add("b", MaxLength, "must be at most %d characters", 80)
	f.Add("a", Enum, "must be one of X")
	err := f.Err()
	e, _ := From(err)
	list := e.Details["errors"].([]FieldError)
	if e.Status != 400 || e.Code != CodeInvalidInput || len(list) != 2 || list[0].Field != "a" || list[1].Constraint != MaxLength {
		t.Fatalf("%+v", e)
	}
}

func TestMergeFields_DropsRepeats(t *testing.T) {
	var a, b Fields
	a.Add("x", Type, "must be a string")
	b.Add("x", Required, "is required")
	b.Add("y", Enum, "bad")
	got := FieldList(MergeFields(a.Err(), b.Err()))
	if len(got) != 2 || got[0].Constraint != Type || got[1].Field != "y" {
		t.Fatalf("%+v", got)
	}
	other := New(CodeConflict, "c")
	if MergeFields(other, b.Err()) != error(other) {
		t.Fatal("a non-validation error wins")
	}
}
