package agents

import (
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
)

// R-AGENT-15: purchase-card actions wait five minutes.
func TestPurchaseCardTTL_R_AGENT_15(t *testing.T) {
	if PurchaseCardTTL != 5*time.Minute {
		t.Fatalf("PurchaseCardTTL %v", PurchaseCardTTL)
	}
}

// R-AGENT-23: purchaseCard has kind (SINGLE_USE or MERCHANT_LOCKED),
// currency, amount, sourceAccountId and memo; anything else is a 400 naming
// each field.
func TestCardRequest_Validate_R_AGENT_23(t *testing.T) {
	var ok CardRequest
	if err := jsonx.Decode([]byte(`{"kind":"MERCHANT_LOCKED","currency":"USD","amount":1,
		"sourceAccountId":"InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c","memo":"m"}`), &ok); err != nil {
		t.Fatal(err)
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	p := ok.purchase()
	if p.Kind != "MERCHANT_LOCKED" || p.Currency != "USD" || p.Amount != 1 || p.Memo != "m" {
		t.Fatalf("%+v", p)
	}
	var bad CardRequest
	if err := jsonx.Decode([]byte(`{"kind":"STANDARD","currency":"EUR","amount":0,"sourceAccountId":"Card:x"}`), &bad); err != nil {
		t.Fatal(err)
	}
	fields := apierr.FieldList(bad.Validate())
	if len(fields) != 4 {
		t.Fatalf("fields %+v", fields)
	}
	if fields := apierr.FieldList(CardRequest{}.Validate()); len(fields) != 4 {
		t.Fatalf("missing fields %+v", fields)
	}
}

// R-AGENT-41: an agent's PATCH only tightens or freezes.
func TestCardUpdate_Tighten_R_AGENT_41(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	card := store.Card{MaxSpendPerTransaction: i(5000), AllowedMCCs: []string{"5251", "5943"}, BlockedMCCs: []string{"5812"}}
	open := store.Card{MaxSpendPerTransaction: i(5000), AllowedMCCs: []string{}, BlockedMCCs: []string{}}
	decode := func(s string) CardUpdate {
		var u CardUpdate
		if err := jsonx.Decode([]byte(s), &u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, tc := range []struct {
		c     store.Card
		body  string
		allow bool
	}{
		{card, `{"maxSpendPerTransaction":4000}`, true},
		{card, `{"maxSpendPerTransaction":5000}`, true},
		{card, `{"maxSpendPerTransaction":5001}`, false},
		{card, `{"maxSpendPerTransaction":null}`, false},
		{card, `{"maxSpendPerDay":100}`, true},
		{card, `{"maxSpendPerDay":null}`, true}, // nothing to remove
		{card, `{"maxTransactionsPerDay":1}`, true},
		{card, `{"allowedMccs":["5251"]}`, true},
		{card, `{"allowedMccs":["5251","5999"]}`, false},
		{card, `{"allowedMccs":[]}`, false},
		{card, `{"allowedMccs":null}`, false},
		{open, `{"allowedMccs":["5251"]}`, true},
		{card, `{"blockedMccs":["5812","5813"]}`, true},
		{card, `{"blockedMccs":[]}`, false},
		{card, `{"blockedMccs":null}`, false},
		{open, `{"blockedMccs":["5813"]}`, true},
		{card, `{"status":"FROZEN"}`, true},
		{card, `{"status":"CLOSED"}`, true},
		{card, `{"status":"ACTIVE"}`, false},
	} {
		err := decode(tc.body).tighten(tc.c)
		if (err == nil) != tc.allow {
			t.Errorf("%s on %+v: %v, want allowed=%v", tc.body, tc.c, err, tc.allow)
		}
		if e, ok := apierr.From(err); err != nil && (!ok || e.Status != 403) {
			t.Errorf("%s: %v is not a 403", tc.body, err)
		}
	}
}
