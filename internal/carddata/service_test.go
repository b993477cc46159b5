package carddata_test

import (
	"context"
	"crypto/ecdh"
	"crypto/hpke"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/carddata"
	"github.com/paymentsd/paymentsd/internal/keyring"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

var ctx = context.Background()

// each runs fn on every engine with a store that has a key ring (the card
// keys are server secrets sealed under it) and a clock the test moves.
func each(t *testing.T, fn func(t *testing.T, db *store.DB, s *carddata.Service, clock *time.Time)) {
	k, err := keyring.Generate("t1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.New(k)
	if err != nil {
		t.Fatal(err)
	}
	storetest.EachWith(t, store.Options{Keyring: kr}, func(t *testing.T, db *store.DB) {
		clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return clock })
		fn(t, db, carddata.New(db), &clock)
	})
}

var tenant = store.Tenant{PlatformID: "Platform:1", Env: "sandbox"}

func testCard(id string) carddata.Card {
	return carddata.Card{Tenant: tenant, ID: id, PAN: "4000001234567899", ExpMonth: 3, ExpYear: 2029}
}

func seal(t *testing.T, s *carddata.Service, cardID, pin string) carddata.PINEnvelope {
	t.Helper()
	pubB64, err := s.TransportPublicKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(pubB64)
	pub, err := ecdh.P256().NewPublicKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	e, err := carddata.SealPIN(pub, cardID, pin)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// R-CARD-28 / item 4: the CVV is computed from the card verification key, a
// server secret sealed under the key ring, never stored: the same card
// reveals the same CVV2 on a second service over the same store, and the
// database holds no CVV and no clear key.
func TestService_RevealComputesCVV(t *testing.T) {
	each(t, func(t *testing.T, db *store.DB, s *carddata.Service, _ *time.Time) {
		c := testCard("Card:r1")
		r, err := s.Reveal(ctx, c)
		if err != nil || r.PAN != c.PAN || r.ExpMonth != 3 || r.ExpYear != 2029 || len(r.CVV2) != 3 {
			t.Fatalf("reveal %+v %v", r, err)
		}
		again, _ := carddata.New(db).Reveal(ctx, c)
		if again.CVV2 != r.CVV2 {
			t.Fatal("the CVV2 changed between services")
		}
		other := c
		other.ExpYear = 2030
		if o, _ := s.Reveal(ctx, other); o.CVV2 == r.CVV2 && o.CVV2 != "" {
			t.Log("same CVV2 for another expiry (1 in 1000 chance)")
		}
	})
}

// R-CARD-45: set-pin stores a PVV (never the PIN) and returns the PIN to OK;
// R-CARD-41: three consecutive wrong entries block it and the right PIN is
// then refused; R-CARD-46: unblock restores the existing PIN once per rolling
// seven days, a second one within them is refused with the time it becomes
// available; R-CARD-47: unblock without a PIN is refused.
func TestService_PINLifecycle_R_CARD_41_45_46_47(t *testing.T) {
	each(t, func(t *testing.T, db *store.DB, s *carddata.Service, clock *time.Time) {
		c := testCard("Card:p1")
		// R-CARD-47
		if _, err := s.Unblock(ctx, tenant, c.ID); !errors.Is(err, carddata.ErrNoPIN) {
			t.Fatalf("unblock without PIN: %v", err)
		}
		if _, _, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "1234")); !errors.Is(err, carddata.ErrNoPIN) {
			t.Fatalf("verify without PIN: %v", err)
		}
		// R-CARD-45
		st, err := s.SetPIN(ctx, c, seal(t, s, c.ID, "2468"))
		if err != nil || st.Status != carddata.PINOK {
			t.Fatalf("set: %+v %v", st, err)
		}
		row, err := db.Read().GetCardPIN(ctx, tenant, c.ID, false)
		if err != nil || len(row.PVV) != 4 || row.PVV == "2468" {
			t.Fatalf("stored %+v %v", row, err)
		}
		if ok, _, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "2468")); err != nil || !ok {
			t.Fatalf("right PIN: %v %v", ok, err)
		}
		// R-CARD-41
		for i := 1; i <= 3; i++ {
			ok, st, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "1357"))
			if err != nil || ok || st.WrongTries != i {
				t.Fatalf("wrong entry %d: %v %+v %v", i, ok, st, err)
			}
		}
		if st, _ := s.PINState(ctx, tenant, c.ID); st.Status != carddata.PINBlocked {
			t.Fatalf("after three wrong: %+v", st)
		}
		if _, _, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "2468")); !errors.Is(err, carddata.ErrPINBlocked) {
			t.Fatalf("right PIN on blocked: %v", err)
		}
		// R-CARD-46
		if st, err := s.Unblock(ctx, tenant, c.ID); err != nil || st.Status != carddata.PINOK {
			t.Fatalf("unblock: %+v %v", st, err)
		}
		if ok, _, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "2468")); err != nil || !ok {
			t.Fatalf("the existing PIN after unblock: %v %v", ok, err)
		}
		first := *clock
		// What the card resource shows as pinStatus and pinUnblockAvailableAt.
		if st, at, err := carddata.CardPINStatus(ctx, db.Read(), tenant, c.ID); err != nil || st != "OK" || at == nil ||
			!at.Equal(first.Add(carddata.UnblockWindow)) {
			t.Fatalf("card PIN status %q %v %v", st, at, err)
		}
		if st, at, err := carddata.CardPINStatus(ctx, db.Read(), tenant, "Card:none"); err != nil || st != "" || at != nil {
			t.Fatalf("card without PIN: %q %v %v", st, at, err)
		}
		*clock = clock.Add(6 * 24 * time.Hour)
		_, err = s.Unblock(ctx, tenant, c.ID)
		var soon *carddata.UnblockTooSoonError
		if !errors.As(err, &soon) || !soon.AvailableAt.Equal(first.Add(carddata.UnblockWindow)) {
			t.Fatalf("second unblock within 7 days: %v", err)
		}
		*clock = first.Add(carddata.UnblockWindow)
		if _, err := s.Unblock(ctx, tenant, c.ID); err != nil {
			t.Fatalf("unblock after 7 days: %v", err)
		}
		// R-CARD-45: set-pin clears BLOCKED, with the new PIN.
		for i := 0; i < 3; i++ {
			s.VerifyPIN(ctx, c, seal(t, s, c.ID, "0000"))
		}
		if st, err := s.SetPIN(ctx, c, seal(t, s, c.ID, "9876")); err != nil || st.Status != carddata.PINOK {
			t.Fatalf("set on blocked: %+v %v", st, err)
		}
		if ok, _, _ := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "9876")); !ok {
			t.Fatal("the new PIN does not verify")
		}
		// Tenancy: another tenant sees no PIN for the card.
		if st, _ := s.PINState(ctx, store.Tenant{PlatformID: "Platform:2", Env: "sandbox"}, c.ID); st.Status != carddata.PINNone {
			t.Fatalf("another tenant sees %+v", st)
		}
	})
}

// A PIN block made for one card does not set another card's PIN.
func TestService_SetPINOtherCardRefused(t *testing.T) {
	each(t, func(t *testing.T, _ *store.DB, s *carddata.Service, _ *time.Time) {
		if _, err := s.SetPIN(ctx, testCard("Card:b"), seal(t, s, "Card:a", "1234")); !errors.Is(err, carddata.ErrBadEnvelope) {
			t.Fatalf("%v", err)
		}
	})
}

// R-CARD-42 (the URL part): reveal tokens are signed, expire after
// RevealTTL and are single-use: the second Use is refused.
func TestService_RevealTokenSingleUse_R_CARD_42(t *testing.T) {
	each(t, func(t *testing.T, _ *store.DB, s *carddata.Service, clock *time.Time) {
		tok, c, err := s.MintReveal(ctx, tenant, "Card:r", "https://cdn.example.com/c.css")
		if err != nil || !c.ExpiresAt().Equal(clock.Add(carddata.RevealTTL)) {
			t.Fatal(c, err)
		}
		got, err := s.Use(ctx, tok, carddata.KindReveal)
		if err != nil || got.CardID != "Card:r" || got.CSSURL != "https://cdn.example.com/c.css" || got.Tenant() != tenant {
			t.Fatalf("first use %+v %v", got, err)
		}
		if _, err := s.Use(ctx, tok, carddata.KindReveal); !errors.Is(err, carddata.ErrTokenUsed) {
			t.Fatalf("second use: %v", err)
		}
		tok2, _, _ := s.MintReveal(ctx, tenant, "Card:r", "")
		*clock = clock.Add(carddata.RevealTTL)
		if _, err := s.Use(ctx, tok2, carddata.KindReveal); !errors.Is(err, carddata.ErrTokenExpired) {
			t.Fatalf("expired: %v", err)
		}
		if _, _, err := s.MintReveal(ctx, tenant, "Card:r", "http://evil.example.com/x.css"); !errors.Is(err, carddata.ErrBadCSSURL) {
			t.Fatalf("bad css: %v", err)
		}
	})
}

// The PIN page loads once and accepts one submission; the PIN it sets then
// verifies.
func TestService_PINPageOnce(t *testing.T) {
	each(t, func(t *testing.T, _ *store.DB, s *carddata.Service, _ *time.Time) {
		c := testCard("Card:pp")
		if _, _, err := s.MintPINEntry(ctx, tenant, c.ID, "app.example.com"); !errors.Is(err, carddata.ErrBadOrigin) {
			t.Fatalf("bad origin: %v", err)
		}
		tok, _, err := s.MintPINEntry(ctx, tenant, c.ID, "https://app.example.com")
		if err != nil {
			t.Fatal(err)
		}
		claims, submit, err := s.OpenPINPage(ctx, tok)
		if err != nil || claims.Origin != "https://app.example.com" {
			t.Fatal(claims, err)
		}
		if _, _, err := s.OpenPINPage(ctx, tok); !errors.Is(err, carddata.ErrTokenUsed) {
			t.Fatalf("second load: %v", err)
		}
		sc, err := s.Check(ctx, submit, carddata.KindPINSubmit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SubmitPIN(ctx, sc, testCard("Card:other"), seal(t, s, "Card:other", "1111")); !errors.Is(err, carddata.ErrTokenInvalid) {
			t.Fatalf("submission for another card: %v", err)
		}
		if _, err := s.SubmitPIN(ctx, sc, c, seal(t, s, c.ID, "5555")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SubmitPIN(ctx, sc, c, seal(t, s, c.ID, "6666")); !errors.Is(err, carddata.ErrTokenUsed) {
			t.Fatalf("second submission: %v", err)
		}
		if ok, _, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "5555")); err != nil || !ok {
			t.Fatalf("submitted PIN does not verify: %v %v", ok, err)
		}
	})
}

// R-CARD-48: tokenization seals for the provider; a bad key is refused.
func TestService_Tokenize_R_CARD_48(t *testing.T) {
	each(t, func(t *testing.T, _ *store.DB, s *carddata.Service, clock *time.Time) {
		if _, err := s.Tokenize(ctx, testCard("Card:t"), carddata.ProvisioningRequest{ProviderPublicKey: "xx"}); !errors.Is(err, carddata.ErrBadProviderKey) {
			t.Fatalf("%v", err)
		}
		provider, _ := hpke.DHKEM(ecdh.P256()).GenerateKey()
		p, err := s.Tokenize(ctx, testCard("Card:t"), carddata.ProvisioningRequest{
			ProviderPublicKey: base64.StdEncoding.EncodeToString(provider.PublicKey().Bytes())})
		if err != nil || p.ProvisioningID == "" || p.EncryptedData == "" || !p.ExpiresAt.Equal(clock.Add(carddata.ProvisioningTTL)) {
			t.Fatalf("%+v %v", p, err)
		}
	})
}
