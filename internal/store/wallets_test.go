package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// mustWallet stores an EMBEDDED_WALLET account of owner and returns its id;
// ok is false when the owner already had one (the partial unique index).
func mustWallet(t *testing.T, db *store.DB, tn store.Tenant, owner string) (string, bool) {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	la := store.NewLedgerAccount{LedgerAccount: store.LedgerAccount{ID: id.New(id.InternalAccount), Tenant: tn,
		Currency: "USDB", Kind: "INTERNAL", Name: "wallet", CreatedAt: now}, BalanceRow: true}
	var inserted bool
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		a := store.InternalAccount{ID: la.ID, Tenant: tn, CustomerID: owner, Type: "EMBEDDED_WALLET",
			Currency: "USDB", Status: "ACTIVE", LedgerAccountID: la.ID, FundingReference: "ref-" + la.ID[len(la.ID)-12:],
			Instructions: []byte(`[]`), CreatedAt: now, UpdatedAt: now}
		var err error
		if inserted, err = tx.InsertInternalAccount(ctx, a); err != nil || !inserted {
			return err
		}
		_, err = tx.InsertLedgerAccountIfAbsent(ctx, la)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return la.ID, inserted
}

// One wallet per customer and currency; a wallet's key is stored once and
// read only within its tenant; the privacy flag changes wallets only.
func TestWallets_KeysAndProvisioning(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "w-1", "w-2")
		missing, err := db.Read().CustomersWithoutWallet(ctx, sbx, "", "USDB", 10)
		if err != nil || len(missing) != 2 {
			t.Fatalf("missing %v %v", missing, err)
		}
		wid, ok := mustWallet(t, db, sbx, cs[0])
		if !ok {
			t.Fatal("first wallet not inserted")
		}
		if _, again := mustWallet(t, db, sbx, cs[0]); again {
			t.Fatal("second wallet for the same customer and currency")
		}
		missing, err = db.Read().CustomersWithoutWallet(ctx, sbx, "", "USDB", 10)
		if err != nil || len(missing) != 1 || missing[0] != cs[1] {
			t.Fatalf("missing after provisioning %v %v", missing, err)
		}
		now := db.Now().UTC().Truncate(time.Microsecond)
		k := store.WalletKey{AccountID: wid, Tenant: sbx, PublicKey: "02ab", SealedPrivateKey: "c2VhbGVk", CreatedAt: now}
		insert := func(k store.WalletKey) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertWalletKey(ctx, k) })
		}
		if err := insert(k); err != nil {
			t.Fatal(err)
		}
		if err := insert(k); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second key: %v", err)
		}
		got, err := db.Read().GetWalletKey(ctx, sbx, wid)
		if err != nil || got.SealedPrivateKey != k.SealedPrivateKey || got.PublicKey != "02ab" {
			t.Fatalf("%+v %v", got, err)
		}
		if _, err := db.Read().GetWalletKey(ctx, prd, wid); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant key read: %v", err)
		}
		set := func(tn store.Tenant, on bool) (a store.InternalAccount, err error) {
			err = db.InTx(ctx, func(tx *store.Tx) error {
				a, err = tx.SetInternalAccountPrivate(ctx, tn, wid, on, now)
				return err
			})
			return a, err
		}
		a, err := set(sbx, true)
		if err != nil || !a.PrivateEnabled {
			t.Fatalf("%+v %v", a, err)
		}
		if _, err := set(prd, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant privacy change: %v", err)
		}
	})
}

// Signed requests complete once; purging removes expired first steps and
// old completed ones, and keeps what may still be retried.
func TestSignedRequests_FinishOnceAndPurge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		now := db.Now().UTC().Truncate(time.Microsecond)
		mk := func(expires time.Time) store.SignedRequest {
			return store.SignedRequest{ID: id.New("Request"), Tenant: sbx, TokenID: "tok", Method: "POST", Path: "/x",
				BodySHA256: "h", AccountID: "a", Operation: "OP", Params: []byte(`{}`), Payload: "p", Status: "PENDING",
				ExpiresAt: expires, CreatedAt: now}
		}
		old, fresh, done := mk(now.Add(-time.Hour)), mk(now.Add(time.Hour)), mk(now.Add(-time.Hour))
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, r := range []store.SignedRequest{old, fresh, done} {
				if err := tx.InsertSignedRequest(ctx, r); err != nil {
					return err
				}
			}
			return tx.FinishSignedRequest(ctx, sbx, done.ID, "COMPLETED", "", now.Add(-time.Hour))
		}); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.FinishSignedRequest(ctx, sbx, done.ID, "COMPLETED", "", now) })
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second completion: %v", err)
		}
		if _, err := db.Read().LockSignedRequest(ctx, prd, fresh.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant read: %v", err)
		}
		n, err := db.Write().PurgeSignedRequests(ctx, now, 100)
		if err != nil || n != 2 {
			t.Fatalf("purged %d: %v", n, err)
		}
		if _, err := db.Read().LockSignedRequest(ctx, sbx, fresh.ID); err != nil {
			t.Fatalf("a live request was purged: %v", err)
		}
	})
}
