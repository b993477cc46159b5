package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// A card's PIN row round-trips, is replaced by a second Put, and is read
// only within its tenant; unblocks are listed from a time on.
func TestCardPINs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: "Platform:1", Env: "sandbox"}
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		q := db.Write()
		if _, err := q.GetCardPIN(ctx, tn, "Card:1", false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no PIN yet: %v", err)
		}
		p := store.CardPIN{CardID: "Card:1", Tenant: tn, PVV: "1234", PVKI: 1, Status: "OK", SetAt: now, UpdatedAt: now}
		if err := q.PutCardPIN(ctx, p); err != nil {
			t.Fatal(err)
		}
		got, err := q.GetCardPIN(ctx, tn, "Card:1", false)
		if err != nil || got != p {
			t.Fatalf("got %+v, %v; want %+v", got, err, p)
		}
		p.Status, p.WrongTries, p.LastUnblockAt, p.UpdatedAt = "BLOCKED", 3, now.Add(time.Hour), now.Add(time.Hour)
		if err := q.PutCardPIN(ctx, p); err != nil {
			t.Fatal(err)
		}
		if got, _ := q.GetCardPIN(ctx, tn, "Card:1", false); got != p {
			t.Fatalf("after replace %+v", got)
		}
		if _, err := q.GetCardPIN(ctx, store.Tenant{PlatformID: "Platform:1", Env: "production"}, "Card:1", false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another environment reads it: %v", err)
		}
		for _, d := range []time.Duration{0, 24 * time.Hour, 8 * 24 * time.Hour} {
			if err := q.InsertCardPINUnblock(ctx, tn, "Card:1", now.Add(d)); err != nil {
				t.Fatal(err)
			}
		}
		got2, err := q.CardPINUnblocksSince(ctx, tn, "Card:1", now.Add(time.Hour))
		if err != nil || len(got2) != 2 || !got2[0].Equal(now.Add(24*time.Hour)) {
			t.Fatalf("unblocks %v %v", got2, err)
		}
	})
}

// A URL id burns once; ids past their expiry are forgotten.
func TestBurnCardURL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		q := db.Write()
		fresh, err := q.BurnCardURL(ctx, "j1", "reveal", "Card:1", now.Add(time.Minute), now)
		if err != nil || !fresh {
			t.Fatalf("first burn %v %v", fresh, err)
		}
		if fresh, err := q.BurnCardURL(ctx, "j1", "reveal", "Card:1", now.Add(time.Minute), now); err != nil || fresh {
			t.Fatalf("second burn %v %v", fresh, err)
		}
		later := now.Add(2 * time.Minute)
		if _, err := q.BurnCardURL(ctx, "j2", "pin", "Card:1", later.Add(time.Minute), later); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.Read().QueryRowForTest(ctx, `SELECT COUNT(*) FROM card_url_uses WHERE jti = 'j1'`, &n); err != nil || n != 0 {
			t.Fatalf("expired id kept: %d %v", n, err)
		}
	})
}
