package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func mustCardMessage(t *testing.T, db *store.DB, c store.Card, kind string) store.CardMessage {
	t.Helper()
	m := store.CardMessage{ID: id.New("CardNetworkMessage"), Tenant: c.Tenant, CardID: c.ID, Kind: kind,
		Body: []byte(`{"amount":1}`), TransactionID: id.New(id.Transaction), Creates: true, Token: "tok",
		Status: store.CardMessagePending, CreatedAt: db.Now().UTC().Truncate(time.Microsecond)}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCardMessage(ctx, &m) }); err != nil {
		t.Fatal(err)
	}
	return m
}

// Card network messages queue per card in arrival order (seq); a claim
// takes only the first PENDING message of each card, under a lease that
// keeps other claimers off until it runs out; finishing one lets the next
// be claimed. Reads are per tenant.
func TestCardMessages_QueueClaimsAndLeases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "c-1")
		c1 := mustCard(t, db, sbx, cs[0], "4000001234567899", nil)
		c2 := mustCard(t, db, sbx, cs[0], "4000009876543217", nil)
		a1, a2 := mustCardMessage(t, db, c1, "authorization"), mustCardMessage(t, db, c1, "clearing")
		b1 := mustCardMessage(t, db, c2, "authorization")
		if a1.Seq != 1 || a2.Seq != 2 || b1.Seq != 1 {
			t.Fatalf("seq %d %d %d", a1.Seq, a2.Seq, b1.Seq)
		}
		claimed, err := db.ClaimDueCardMessages(ctx, time.Minute, 10)
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claimed %d (%v), want the head of each card's queue", len(claimed), err)
		}
		for _, m := range claimed {
			if m.ID != a1.ID && m.ID != b1.ID || m.Attempts != 1 || m.LeaseUntil == nil {
				t.Fatalf("claimed %+v", m)
			}
		}
		if again, _ := db.ClaimDueCardMessages(ctx, time.Minute, 10); len(again) != 0 {
			t.Fatalf("claimed %d leased or waiting messages", len(again))
		}
		if n, _ := db.Read().PendingCardMessages(ctx, sbx); n != 3 {
			t.Fatalf("pending %d", n)
		}
		if n, _ := db.Read().PendingCardMessages(ctx, prd); n != 0 {
			t.Fatalf("another environment sees %d", n)
		}
		if _, err := db.Read().GetCardMessage(ctx, prd, c1.ID, a1.ID, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another environment read a message: %v", err)
		}
		// a1 applied: a2 is next; b1's lease runs out and it is claimed again.
		done := claimed[0]
		if done.ID != a1.ID {
			done = claimed[1]
		}
		at := db.Now()
		done.Status, done.AppliedAt = store.CardMessageApplied, &at
		if err := db.Write().FinishCardMessage(ctx, done); err != nil {
			t.Fatal(err)
		}
		db.SetClock(func() time.Time { return time.Now().Add(2 * time.Minute) })
		defer db.SetClock(time.Now)
		next, err := db.ClaimDueCardMessages(ctx, time.Minute, 10)
		if err != nil || len(next) != 2 {
			t.Fatalf("after a1 and b1's lease: %d %v", len(next), err)
		}
		for _, m := range next {
			if m.ID != a2.ID && !(m.ID == b1.ID && m.Attempts == 2) {
				t.Fatalf("claimed %+v", m)
			}
		}
		got, err := db.Read().GetCardMessage(ctx, sbx, c1.ID, a1.ID, false)
		if err != nil || got.Status != store.CardMessageApplied || got.LeaseUntil != nil || got.AppliedAt == nil {
			t.Fatalf("finished message %+v %v", got, err)
		}
		if m, err := db.Read().CardMessageCreating(ctx, sbx, c1.ID, a2.TransactionID); err != nil || m.ID != a2.ID {
			t.Fatalf("CardMessageCreating %v %v", m.ID, err)
		}
		if n, _ := db.Read().CardPendingMessages(ctx, sbx, c2.ID); n != 1 {
			t.Fatalf("card 2 pending %d", n)
		}
	})
}
