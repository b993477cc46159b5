package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func TestDashboardSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		now := time.Now().UTC().Truncate(time.Microsecond)
		tn := store.Tenant{PlatformID: "Platform:p", Env: "sandbox"}
		s := store.DashboardSession{IDHash: "h1", Tenant: tn, TokenID: "Token:t", CSRFToken: "c",
			CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Minute)}
		if err := db.Write().InsertDashboardSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().DashboardSessionByHash(ctx, "h1", now)
		if err != nil || got != s {
			t.Fatalf("read back %+v, %v; want %+v", got, err, s)
		}
		if _, err := db.Read().DashboardSessionByHash(ctx, "h1", now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("expired session: %v", err)
		}
		later := now.Add(30 * time.Second)
		if err := db.Write().TouchDashboardSession(ctx, "h1", later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Read().DashboardSessionByHash(ctx, "h1", now.Add(time.Minute)); err != nil || !got.LastSeenAt.Equal(later) {
			t.Fatalf("touched session %+v, %v", got, err)
		}
		s2 := s
		s2.IDHash, s2.ExpiresAt = "h2", now.Add(time.Second)
		if err := db.Write().InsertDashboardSession(ctx, s2); err != nil {
			t.Fatal(err)
		}
		if n, err := db.Write().DeleteExpiredDashboardSessions(ctx, now.Add(2*time.Second)); err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want the one expired", n, err)
		}
		if err := db.Write().DeleteDashboardSession(ctx, "h1"); err != nil {
			t.Fatal(err)
		}
		if err := db.Write().DeleteDashboardSession(ctx, "h1"); err != nil {
			t.Fatalf("ending a session twice: %v", err)
		}
		if _, err := db.Read().DashboardSessionByHash(ctx, "h1", now); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("signed-out session: %v", err)
		}
	})
}
