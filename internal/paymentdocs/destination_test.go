package paymentdocs

import (
	"context"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/idempotency"
)

func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok || e.Code != apierr.CodeInvalidInput || e.Status != 400 {
		t.Fatalf("want 400 INVALID_INPUT, got %v", err)
	}
	out := map[string]string{}
	for _, f := range apierr.FieldList(err) {
		out[f.Field] = f.Constraint
	}
	return out
}

// R-PDOC-14: documentIds only on a CNY bank transfer to an external account
// with beneficiaryType BUSINESS; anything else is 400 INVALID_INPUT.
func TestValidateDocumentIDs_Destination_R_PDOC_14(t *testing.T) {
	ids := []string{"PaymentDocument:x"}
	if err := ValidateDocumentIDs("CNY", DestExternalBankAccount, "BUSINESS", ids); err != nil {
		t.Fatal(err)
	}
	if !RequiresDocuments("CNY", DestExternalBankAccount, "BUSINESS") {
		t.Fatal("a CNY business bank payout needs documents")
	}
	refused := []struct {
		cur  string
		kind DestinationKind
		ben  string
	}{
		{"USD", DestExternalBankAccount, "BUSINESS"},
		{"CNY", DestExternalBankAccount, "INDIVIDUAL"},
		{"CNY", DestExternalBankAccount, ""},
		{"CNY", DestOther, "BUSINESS"},
		{"cny", DestExternalBankAccount, "BUSINESS"},
	}
	for _, c := range refused {
		if f := fieldsOf(t, ValidateDocumentIDs(c.cur, c.kind, c.ben, ids)); f["documentIds"] != apierr.AdditionalProperties {
			t.Fatalf("%+v: %v", c, f)
		}
		if RequiresDocuments(c.cur, c.kind, c.ben) {
			t.Fatalf("%+v needs no documents", c)
		}
		// Without documentIds any destination is fine.
		if err := ValidateDocumentIDs(c.cur, c.kind, c.ben, nil); err != nil {
			t.Fatal(err)
		}
		if err := ValidateDocumentIDs(c.cur, c.kind, c.ben, []string{}); err != nil {
			t.Fatal(err)
		}
	}
}

// R-PDOC-13: at most 3 ids; each once.
func TestValidateDocumentIDs_AtMostThree_R_PDOC_13(t *testing.T) {
	three := []string{"PaymentDocument:a", "PaymentDocument:b", "PaymentDocument:c"}
	if err := ValidateDocumentIDs("CNY", DestExternalBankAccount, "BUSINESS", three); err != nil {
		t.Fatal(err)
	}
	four := append(three, "PaymentDocument:d")
	if f := fieldsOf(t, ValidateDocumentIDs("CNY", DestExternalBankAccount, "BUSINESS", four)); f["documentIds"] != apierr.MaxItems {
		t.Fatalf("%v", f)
	}
	dup := []string{"PaymentDocument:a", "PaymentDocument:a"}
	if f := fieldsOf(t, ValidateDocumentIDs("CNY", DestExternalBankAccount, "BUSINESS", dup)); f["documentIds[1]"] != apierr.UniqueItems {
		t.Fatalf("%v", f)
	}
	// Both problems at once, on another destination: every field listed.
	f := fieldsOf(t, ValidateDocumentIDs("USD", DestExternalBankAccount, "BUSINESS", append(four, "")))
	if f["documentIds"] == "" || f["documentIds[4]"] != apierr.MinLength {
		t.Fatalf("%v", f)
	}
}

// R-IDEM-05: documentIds need an Idempotency-Key.
func TestRequireIdempotencyKey_R_IDEM_05(t *testing.T) {
	ctx := context.Background()
	if f := fieldsOf(t, RequireIdempotencyKey(ctx, []string{"PaymentDocument:a"})); f["Idempotency-Key"] != apierr.Required {
		t.Fatalf("%v", f)
	}
	if err := RequireIdempotencyKey(ctx, nil); err != nil {
		t.Fatal("a quote without documents needs no key (R-IDEM-06)")
	}
	withKey := idempotency.With(ctx, &idempotency.Claim{Key: "k"})
	if err := RequireIdempotencyKey(withKey, []string{"PaymentDocument:a"}); err != nil {
		t.Fatal(err)
	}
}
