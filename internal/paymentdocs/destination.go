package paymentdocs

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/idempotency"
)

// MaxPerQuote is how many documents one quote may carry (R-PDOC-13).
const MaxPerQuote = 3

// DestinationKind is what a quote pays into, as far as documents care. The
// quote service maps its own destination model onto these.
type DestinationKind string

const (
	// DestExternalBankAccount is a bank transfer to an external account
	// (any bank account type, e.g. CNY_ACCOUNT or SWIFT_ACCOUNT).
	DestExternalBankAccount DestinationKind = "EXTERNAL_BANK_ACCOUNT"
	// DestOther is every other destination: wallets, internal accounts,
	// UMA addresses, chain addresses.
	DestOther DestinationKind = "OTHER"
)

// Beneficiary types that matter here.
const BeneficiaryBusiness = "BUSINESS"

// RequiresDocuments reports whether a payout is the one the requirement
// table governs: a CNY bank transfer to an external account whose
// beneficiaryType is BUSINESS. Such a payout needs a purposeOfPayment from
// AllowedPurposes and the documents of Requirements(purpose) (check them
// with AttachRequired or Check).
func RequiresDocuments(currency string, kind DestinationKind, beneficiaryType string) bool {
	return currency == "CNY" && kind == DestExternalBankAccount && beneficiaryType == BeneficiaryBusiness
}

// ValidateDocumentIDs checks a quote's documentIds against its destination
// (R-PDOC-13, R-PDOC-14): they are accepted only when RequiresDocuments
// holds, at most MaxPerQuote, each once. Every problem is 400 INVALID_INPUT
// on field documentIds. An empty list is the same as none. Pure: it reads
// nothing but its arguments.
func ValidateDocumentIDs(currency string, kind DestinationKind, beneficiaryType string, documentIDs []string) error {
	if len(documentIDs) == 0 {
		return nil
	}
	var f apierr.Fields
	if !RequiresDocuments(currency, kind, beneficiaryType) {
		f.Add("documentIds", apierr.AdditionalProperties,
			"is accepted only on a CNY bank transfer to an external account with beneficiaryType BUSINESS")
	}
	idListErrors(&f, documentIDs)
	return f.Err()
}

// idListErrors adds the shape problems of a documentIds list.
func idListErrors(f *apierr.Fields, documentIDs []string) {
	if len(documentIDs) > MaxPerQuote {
		f.Add("documentIds", apierr.MaxItems, "may hold at most %d document ids, got %d", MaxPerQuote, len(documentIDs))
	}
	seen := map[string]bool{}
	for i, d := range documentIDs {
		field := fmt.Sprintf("documentIds[%d]", i)
		switch {
		case d == "":
			f.Add(field, apierr.MinLength, "must not be empty")
		case seen[d]:
			f.Add(field, apierr.UniqueItems, "lists %s twice; each document satisfies one requirement", d)
		}
		seen[d] = true
	}
}

// RequireIdempotencyKey refuses a request that carries documentIds without
// an Idempotency-Key (R-IDEM-05): 400 INVALID_INPUT on field
// Idempotency-Key. ctx is the request's: the HTTP layer puts the key's claim
// in it when the route is idempotent and the header is present.
func RequireIdempotencyKey(ctx context.Context, documentIDs []string) error {
	if len(documentIDs) == 0 || idempotency.FromContext(ctx) != nil {
		return nil
	}
	var f apierr.Fields
	f.Add("Idempotency-Key", apierr.Required, "is required on a quote with documentIds; retry with a fresh key")
	return f.Err()
}
