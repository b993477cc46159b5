package store_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// TokenByClientIDSeeing answers, in one statement, what TokenByClientID,
// the key's lookup and InternalAccountsWithOwners (for the token's tenant)
// answer apart: the token; whether its tenant, not another environment,
// holds the key; the tenant's accounts with live owners and their
// agreements, not another tenant's, a deleted customer's or an unknown one.
func TestTokenByClientIDSeeing_AsTheSeparateReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		tok := mustToken(t, db, sbx, "read-ahead")
		cs := mustCustomers(t, db, sbx, "ra-1", "ra-2")
		ids := mustOwnedAccounts(t, db, sbx, ownedAccount{cs[0], "INTERNAL_FIAT"}, ownedAccount{cs[1], "INTERNAL_FIAT"},
			ownedAccount{"", "INTERNAL_FIAT"})
		other := mustOwnedAccounts(t, db, prd, ownedAccount{"", "INTERNAL_FIAT"})
		mustAgree(t, db, sbx, cs[0], "PRIVACY_POLICY", "END_USER_TERMS")
		deleteCustomer(t, db, sbx, cs[1])
		for _, tn := range []store.Tenant{sbx, prd} {
			if err := db.Write().InsertIdempotencyRecord(ctx, tn, "k-"+tn.Env, "h", 200, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
		asked := append(append([]string{}, ids...), other[0], "InternalAccount:none", ids[0])
		wantToken, err := db.Read().TokenByClientID(ctx, tok.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		wantAccounts, wantOwners, err := db.Read().InternalAccountsWithOwners(ctx, sbx, asked...)
		if err != nil || len(wantAccounts) != 2 || len(wantOwners) != 1 {
			t.Fatalf("the separate read: %d accounts, %d owners (%v); want cs[0]'s and the platform's, and cs[0]",
				len(wantAccounts), len(wantOwners), err)
		}
		for key, wantSeen := range map[string]bool{"k-" + store.EnvSandbox: true, "k-" + store.EnvProduction: false, "": false} {
			for _, accounts := range [][]string{nil, asked} {
				got, seen, err := db.Read().TokenByClientIDSeeing(ctx, tok.ClientID, store.ReadAhead{Key: key, AccountIDs: accounts})
				if err != nil || !reflect.DeepEqual(got, wantToken) || seen.Key != wantSeen {
					t.Fatalf("key %q, accounts %v: %+v seen %v (%v); want %+v seen %v", key, accounts, got, seen.Key, err, wantToken, wantSeen)
				}
				if (seen.Accounts != nil) != (accounts != nil) {
					t.Fatalf("key %q, accounts %v: read ahead %v", key, accounts, seen.Accounts != nil)
				}
				if accounts == nil {
					continue
				}
				before := db.ReadAheadStats()
				a, o, err := db.Read().InternalAccountsWithOwners(store.WithAccountsRead(ctx, seen.Accounts), sbx, asked...)
				if err != nil || !reflect.DeepEqual(a, wantAccounts) || !reflect.DeepEqual(o, wantOwners) {
					t.Fatalf("read ahead\n%+v\n%+v (%v)\nread apart\n%+v\n%+v", a, o, err, wantAccounts, wantOwners)
				}
				if after := db.ReadAheadStats(); after.Used != before.Used+1 {
					t.Fatalf("the read was not answered by the read-ahead: %+v then %+v", before, after)
				}
			}
		}
		// Nothing of the tenant's among the ids: the token still comes back.
		if got, seen, err := db.Read().TokenByClientIDSeeing(ctx, tok.ClientID, store.ReadAhead{AccountIDs: other}); err != nil ||
			got.ID != tok.ID || seen.Accounts == nil {
			t.Fatalf("another tenant's account only: %+v %+v %v", got, seen, err)
		}
		for _, accounts := range [][]string{nil, ids} {
			if _, _, err := db.Read().TokenByClientIDSeeing(ctx, "nobody", store.ReadAhead{Key: "k", AccountIDs: accounts}); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("unknown client id, accounts %v: %v", accounts, err)
			}
		}
	})
}

// A read-ahead answers one InternalAccountsWithOwners: for its tenant and
// its ids, outside a transaction, once. Every other read reads the
// database (here after the account's owner was deleted, so it finds none).
func TestReadAhead_AnswersOnceForItsTenantAndIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		tok := mustToken(t, db, sbx, "read-ahead")
		cs := mustCustomers(t, db, sbx, "once-1")
		ids := mustOwnedAccounts(t, db, sbx, ownedAccount{cs[0], "INTERNAL_FIAT"}, ownedAccount{cs[0], "EMBEDDED_WALLET"})
		_, seen, err := db.Read().TokenByClientIDSeeing(ctx, tok.ClientID, store.ReadAhead{AccountIDs: []string{ids[1], ids[0], ids[1]}})
		if err != nil {
			t.Fatal(err)
		}
		deleteCustomer(t, db, sbx, cs[0])
		rctx := store.WithAccountsRead(ctx, seen.Accounts)
		read := func(q store.Q, tn store.Tenant, ids ...string) int {
			t.Helper()
			a, _, err := q.InternalAccountsWithOwners(rctx, tn, ids...)
			if err != nil {
				t.Fatal(err)
			}
			return len(a)
		}
		if n := read(db.Read(), prd, ids...); n != 0 {
			t.Fatalf("another environment's read found %d", n)
		}
		if n := read(db.Read(), sbx, ids[0]); n != 0 {
			t.Fatalf("a read of other ids found %d", n)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if n := read(tx.Q, sbx, ids...); n != 0 {
				t.Fatalf("a read inside a transaction found %d", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		before := db.ReadAheadStats()
		if n := read(db.Read(), sbx, ids[0], ids[1]); n != 2 {
			t.Fatalf("the read the read-ahead answers found %d; want the two it read", n)
		}
		if n := read(db.Read(), sbx, ids...); n != 0 {
			t.Fatalf("a second read found %d: the read-ahead answered twice", n)
		}
		if after := db.ReadAheadStats(); after.Used != before.Used+1 {
			t.Fatalf("uses: %+v then %+v", before, after)
		}
	})
}
