package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Settings read from memory still change at once when this node writes
// them, inside a transaction as well as in a group commit, and a rolled-back
// write changes nothing.
func TestSettings_WritesThroughThisNodeAreSeenAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: id.New(id.Platform), Env: store.EnvSandbox}
		now := time.Now().UTC().Truncate(time.Microsecond)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertPlatform(ctx, store.Platform{ID: tn.PlatformID, Name: "p", CreatedAt: now}); err != nil {
				return err
			}
			return tx.InsertPlatformConfig(ctx, store.PlatformConfig{ID: "PlatformConfig:1", Tenant: tn, Document: []byte(`{"v":1}`), CreatedAt: now, UpdatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		if c, err := db.PlatformConfig(ctx, tn); err != nil || string(c.Document) != `{"v":1}` {
			t.Fatalf("%s %v", c.Document, err)
		}
		if p, err := db.Platform(ctx, tn.PlatformID); err != nil || p.Regulated {
			t.Fatalf("%+v %v", p, err)
		}
		update := func(doc string, fail error) error {
			return db.InBatchTx(ctx, func(tx *store.Tx) error {
				if err := tx.UpdatePlatformConfig(ctx, store.PlatformConfig{Tenant: tn, Document: []byte(doc), UpdatedAt: now}); err != nil {
					return err
				}
				return fail
			})
		}
		boom := errors.New("boom")
		if err := update(`{"v":2}`, boom); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if c, err := db.PlatformConfig(ctx, tn); err != nil || string(c.Document) != `{"v":1}` {
			t.Fatalf("after a rolled-back update: %s %v", c.Document, err)
		}
		if err := update(`{"v":3}`, nil); err != nil {
			t.Fatal(err)
		}
		if c, err := db.PlatformConfig(ctx, tn); err != nil || string(c.Document) != `{"v":3}` {
			t.Fatalf("after an update: %s %v", c.Document, err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetPlatformRegulated(ctx, tn.PlatformID, true) }); err != nil {
			t.Fatal(err)
		}
		if p, err := db.Platform(ctx, tn.PlatformID); err != nil || !p.Regulated {
			t.Fatalf("after SetPlatformRegulated: %+v %v", p, err)
		}

		// Secrets: a rotation is seen at once; an expired one drops out
		// when its time comes, without a reload.
		secret := func(sid string, expires *time.Time) store.WebhookSecret {
			return store.WebhookSecret{ID: sid, Tenant: tn, Secret: "whsec_" + sid, CreatedAt: now, ExpiresAt: expires}
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertWebhookSecret(ctx, secret("a", nil)) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.WebhookSecrets(ctx, tn, now); err != nil || len(got) != 1 {
			t.Fatalf("%+v %v", got, err)
		}
		end := now.Add(time.Hour)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.ExpireCurrentWebhookSecret(ctx, tn, end); err != nil {
				return err
			}
			return tx.InsertWebhookSecret(ctx, secret("b", nil))
		}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.WebhookSecrets(ctx, tn, now); err != nil || len(got) != 2 {
			t.Fatalf("during the overlap: %+v %v", got, err)
		}
		if got, err := db.WebhookSecrets(ctx, tn, end); err != nil || len(got) != 1 || got[0].ID != "b" {
			t.Fatalf("after the overlap: %+v %v", got, err)
		}
	})
}

// The SCA settings document is served from memory too (every payment from a
// customer reads it); a write through this node is seen at once, a
// rolled-back one never.
func TestSettings_ScaSettingsSeenAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: id.New(id.Platform), Env: store.EnvSandbox}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertPlatform(ctx, store.Platform{ID: tn.PlatformID, Name: "p", CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
		}); err != nil {
			t.Fatal(err)
		}
		if doc, err := db.Read().ScaSettings(ctx, tn); err != nil || doc != nil {
			t.Fatalf("none yet: %s %v", doc, err)
		}
		put := func(doc string, fail error) error {
			return db.InBatchTx(ctx, func(tx *store.Tx) error {
				if err := tx.PutScaSettings(ctx, tn, []byte(doc), time.Now()); err != nil {
					return err
				}
				return fail
			})
		}
		if err := put(`{"v":1}`, nil); err != nil {
			t.Fatal(err)
		}
		if doc, err := db.Read().ScaSettings(ctx, tn); err != nil || string(doc) != `{"v":1}` {
			t.Fatalf("after a put: %s %v", doc, err)
		}
		boom := errors.New("boom")
		if err := put(`{"v":2}`, boom); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if doc, err := db.Read().ScaSettings(ctx, tn); err != nil || string(doc) != `{"v":1}` {
			t.Fatalf("after a rolled-back put: %s %v", doc, err)
		}
		if err := put(`{"v":3}`, nil); err != nil {
			t.Fatal(err)
		}
		if doc, err := db.Read().ScaSettings(ctx, tn); err != nil || string(doc) != `{"v":3}` {
			t.Fatalf("after a second put: %s %v", doc, err)
		}
	})
}
