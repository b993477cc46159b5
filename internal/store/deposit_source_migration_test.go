package store_test

import (
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Migration 0022: stored deposits whose source said EXTERNAL_ACCOUNT (not a
// source type of the spec) say REALTIME_FUNDING; other sources are left as
// they are.
func TestMigration0022_DepositSourceType(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		now := db.Now().UTC().Truncate(time.Microsecond)
		old, acct := txnRow(tn, "", "INCOMING", "COMPLETED", now), txnRow(tn, "", "OUTGOING", "COMPLETED", now)
		old.Source = []byte(`{"sourceType":"EXTERNAL_ACCOUNT","currency":"USD","bankName":"EXTERNAL_ACCOUNT bank"}`)
		acct.Source = []byte(`{"sourceType":"ACCOUNT","accountId":"InternalAccount:a"}`)
		mustInsert(t, db, old, acct)
		if err := db.ExecRaw(ctx, "DELETE FROM schema_migrations WHERE version = 22"); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{
			old.ID:  `{"sourceType":"REALTIME_FUNDING","currency":"USD","bankName":"EXTERNAL_ACCOUNT bank"}`,
			acct.ID: string(acct.Source),
		} {
			got, err := db.Read().GetTransaction(ctx, tn, id)
			if err != nil || string(got.Source) != want {
				t.Fatalf("%s: %s %v, want %s", id, got.Source, err, want)
			}
		}
	})
}
