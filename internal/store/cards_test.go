package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func mustCard(t *testing.T, db *store.DB, tn store.Tenant, customerID, pan string, due *time.Time) store.Card {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	per := int64(5000)
	c := store.Card{ID: id.New(id.Card), Tenant: tn, CustomerID: customerID, PlatformCardID: "p-" + pan[12:],
		Status: "PROCESSING", Form: "VIRTUAL", Brand: "VISA", Currency: "USD", FundingSource: "InternalAccount:x",
		FundingBindingID: id.New(id.CardFundingSource), Last4: pan[12:], ExpMonth: 11, ExpYear: 2029,
		MaxSpendPerDay: &per, AllowedMCCs: []string{"5814", "5812"}, BlockedMCCs: []string{}, ProvisionDueAt: due,
		CreatedAt: now, UpdatedAt: now}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCard(ctx, c, pan) }); err != nil {
		t.Fatal(err)
	}
	return c
}

// The card number is stored sealed under the key ring (no digit of it in
// the column), opens only for its own card and tenant, and round-trips.
func TestCards_PANSealedTenancyAndClaims(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "c-1")
		past := db.Now().Add(-time.Second)
		pan := "4000001234567899"
		c := mustCard(t, db, sbx, cs[0], pan, &past)
		var sealed string
		if err := db.Read().QueryRowForTest(ctx, `SELECT sealed_pan FROM cards WHERE id = '`+c.ID+`'`, &sealed); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "kr1:") || strings.Contains(sealed, pan[:10]) {
			t.Fatalf("the card number is not sealed: %q", sealed)
		}
		got, err := db.Read().CardPAN(ctx, sbx, c.ID)
		if err != nil || got != pan {
			t.Fatalf("CardPAN %v", err)
		}
		if _, err := db.Read().CardPAN(ctx, prd, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another environment read the number: %v", err)
		}
		// A sealed number copied onto another card does not open there.
		other := mustCard(t, db, sbx, cs[0], "4000009876543217", nil)
		if err := db.Write().ExecForTest(ctx, `UPDATE cards SET sealed_pan = ? WHERE id = ?`, sealed, other.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read().CardPAN(ctx, sbx, other.ID); err == nil {
			t.Fatal("a sealed number opened on another card")
		}
		back, err := db.Read().GetCard(ctx, sbx, c.ID, false)
		if err != nil || *back.MaxSpendPerDay != 5000 || back.MaxSpendPerTransaction != nil ||
			strings.Join(back.AllowedMCCs, ",") != "5814,5812" || len(back.BlockedMCCs) != 0 {
			t.Fatalf("card %+v %v", back, err)
		}
		list, total, err := db.Read().ListCards(ctx, sbx, store.CardFilter{CustomerID: cs[0], Status: "PROCESSING"}, "", 10)
		if err != nil || total != 2 || len(list) != 2 {
			t.Fatalf("list %d %d %v", total, len(list), err)
		}
		// Only the due card is claimed, once while its lease holds.
		claimed, err := db.ClaimDueCardProvisioning(ctx, time.Minute, 10)
		if err != nil || len(claimed) != 1 || claimed[0].ID != c.ID || claimed[0].ProvisionAttempts != 1 {
			t.Fatalf("claimed %v %v", claimed, err)
		}
		if again, err := db.ClaimDueCardProvisioning(ctx, time.Minute, 10); err != nil || len(again) != 0 {
			t.Fatalf("claimed again %v %v", again, err)
		}
		if n, err := db.Read().CountLiveCards(ctx, sbx); err != nil || n != 2 {
			t.Fatalf("live %d %v", n, err)
		}
	})
}
