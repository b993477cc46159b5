package cards

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

func p(v int64) *int64 { return &v }

// R-CARD-40: the lower of two caps applies; an unset cap is no cap.
func TestLower_R_CARD_40(t *testing.T) {
	for _, c := range []struct{ a, b, want *int64 }{
		{nil, nil, nil}, {p(5), nil, p(5)}, {nil, p(7), p(7)}, {p(5), p(7), p(5)}, {p(9), p(7), p(7)}, {p(7), p(7), p(7)},
	} {
		got := lower(c.a, c.b)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Fatalf("lower(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

func TestBlockedMCC(t *testing.T) {
	s := func(v string) *string { return &v }
	card := store.Card{BlockedMCCs: []string{"7995"}}
	if !blockedMCC(card, s("7995")) || blockedMCC(card, s("5814")) || blockedMCC(card, nil) {
		t.Fatal("block list")
	}
	card.AllowedMCCs = []string{"5814"}
	if blockedMCC(card, s("5814")) || !blockedMCC(card, s("5812")) || !blockedMCC(card, nil) {
		t.Fatal("allow list")
	}
}

func TestScale_USDBFundsUSDCards(t *testing.T) {
	if scale("USD", "USD") != 1 || scale("USD", "USDB") != 10_000 {
		t.Fatalf("scale %d %d", scale("USD", "USD"), scale("USD", "USDB"))
	}
}

func TestSandboxIssuer_MagicValues(t *testing.T) {
	iss := SandboxIssuer{}
	req := ProvisionRequest{CardID: "Card:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", Env: store.EnvSandbox, Attempt: 1}
	if r, err := iss.Provision(t.Context(), req); err != nil || !r.Approved || r.IssuerRef == "" {
		t.Fatalf("plain %v %v", r, err)
	}
	req.PlatformCardID = "x" + SandboxRejectSuffix
	if r, err := iss.Provision(t.Context(), req); err != nil || r.Approved {
		t.Fatalf("reject %v %v", r, err)
	}
	req.PlatformCardID = "x" + SandboxUnavailableSuffix
	if _, err := iss.Provision(t.Context(), req); err == nil {
		t.Fatal("unavailable on attempt 1")
	}
	req.Attempt = 3
	if r, err := iss.Provision(t.Context(), req); err != nil || !r.Approved {
		t.Fatalf("attempt 3 %v %v", r, err)
	}
	if iss.Ready(store.EnvProduction) == nil || (ProductionIssuer{}).Ready(store.EnvProduction) == nil {
		t.Fatal("production accepted")
	}
}
