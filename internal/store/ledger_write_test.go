package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// WriteLedger stores a batch's transfers, postings, buckets and balance
// changes (one statement on PostgreSQL) and names a balance change that did
// not apply: a moved version, or a floor the change would break.
func TestWriteLedger_WritesAllAndNamesAChangeThatDidNotApply(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		now := db.Now().UTC().Truncate(time.Microsecond)
		var a, b string
		for _, p := range []*string{&a, &b} {
			acct := store.NewLedgerAccount{LedgerAccount: store.LedgerAccount{ID: id.New("LedgerAccount"), Tenant: tn,
				Currency: "USD", Kind: "INTERNAL", Name: "w", CreatedAt: now}, BalanceRow: true}
			if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.InsertLedgerAccountIfAbsent(ctx, acct); return err }); err != nil {
				t.Fatal(err)
			}
			*p = acct.ID
		}
		write := func(amount, versionA int64, floor bool) (string, string, error) {
			tr := store.LedgerTransfer{ID: id.New("LedgerTransfer"), Tenant: tn, Kind: "TRANSFER", Reference: "r", CreatedAt: now}
			ps := []store.LedgerPosting{
				{ID: id.New("LedgerPosting"), Tenant: tn, TransferID: tr.ID, AccountID: a, Currency: "USD", Amount: -amount, CreatedAt: now},
				{ID: id.New("LedgerPosting"), Tenant: tn, TransferID: tr.ID, AccountID: b, Currency: "USD", Amount: amount, CreatedAt: now},
			}
			vb, err := db.Read().GetLedgerBalance(ctx, tn, b)
			if err != nil {
				t.Fatal(err)
			}
			changes := []store.LedgerBalanceChange{
				{AccountID: a, Version: versionA, Posted: -amount, FloorZero: floor},
				{AccountID: b, Version: vb.Version, Posted: amount, FloorZero: floor},
			}
			var failed string
			boom := errors.New("roll back")
			err = db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				if failed, err = tx.WriteLedger(ctx, tn, []store.LedgerTransfer{tr}, ps, ps, changes, now); err != nil {
					return err
				}
				if failed != "" {
					return boom
				}
				return nil
			})
			if errors.Is(err, boom) {
				err = nil
			}
			return failed, tr.ID, err
		}
		va, err := db.Read().GetLedgerBalance(ctx, tn, a)
		if err != nil {
			t.Fatal(err)
		}
		// a may go negative here (no floor): a +100 -> b.
		if failed, _, err := write(100, va.Version, false); err != nil || failed != "" {
			t.Fatalf("applied write: %q %v", failed, err)
		}
		got, _ := db.Read().GetLedgerBalance(ctx, tn, a)
		if got.Posted != -100 || got.Version != va.Version+1 {
			t.Fatalf("balance of a after the write: %+v", got)
		}
		if failed, _, err := write(1, va.Version, false); err != nil || failed != a {
			t.Fatalf("stale version: failed %q %v; want %s", failed, err, a)
		}
		if failed, _, err := write(1, got.Version, true); err != nil || failed != a {
			t.Fatalf("floor: failed %q %v; want %s", failed, err, a)
		}
		if after, _ := db.Read().GetLedgerBalance(ctx, tn, a); after != got {
			t.Fatalf("refused writes changed the balance: %+v, was %+v", after, got)
		}
	})
}
