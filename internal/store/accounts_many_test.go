package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// GetInternalAccounts answers, in one query, what GetInternalAccount
// answers for each id: the tenant's accounts whose owner is live.
func TestGetInternalAccounts_AsGetInternalAccountForEach(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "ia-1", "ia-2")
		ids := mustOwnedAccounts(t, db, sbx, ownedAccount{cs[0], "INTERNAL_FIAT"}, ownedAccount{cs[1], "INTERNAL_FIAT"},
			ownedAccount{"", "INTERNAL_FIAT"})
		deleteCustomer(t, db, sbx, cs[1])
		got, err := db.Read().GetInternalAccounts(ctx, sbx, append(ids, ids[0], "InternalAccount:none")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, aid := range append(ids, "InternalAccount:none") {
			one, err := db.Read().GetInternalAccount(ctx, sbx, aid)
			many, ok := got[aid]
			if (err == nil) != ok || (ok && many.ID != one.ID) {
				t.Fatalf("%s: one by one %+v %v; together %+v %v", aid, one, err, many, ok)
			}
		}
		if len(got) != 2 {
			t.Fatalf("%d accounts; want the live customer's and the platform's", len(got))
		}
		if other, err := db.Read().GetInternalAccounts(ctx, prd, ids...); err != nil || len(other) != 0 {
			t.Fatalf("another environment's read: %v %v", other, err)
		}
	})
}

// InternalAccountsWithOwners answers what GetInternalAccounts answers, and
// for each live owner what LiveCustomerWithAgreements answers, in one query.
func TestInternalAccountsWithOwners_AsTheTwoReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "io-1", "io-2", "io-3")
		// Two accounts of cs[0] (two agreements), one of cs[1] (none), one of
		// cs[2] (deleted below), one of the platform.
		ids := mustOwnedAccounts(t, db, sbx, ownedAccount{cs[0], "INTERNAL_FIAT"}, ownedAccount{cs[0], "EMBEDDED_WALLET"},
			ownedAccount{cs[1], "INTERNAL_FIAT"}, ownedAccount{cs[2], "INTERNAL_FIAT"}, ownedAccount{"", "INTERNAL_FIAT"})
		mustAgree(t, db, sbx, cs[0], "PRIVACY_POLICY", "END_USER_TERMS")
		deleteCustomer(t, db, sbx, cs[2])
		asked := append(ids, ids[0], "InternalAccount:none")
		got, owners, err := db.Read().InternalAccountsWithOwners(ctx, sbx, asked...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := db.Read().GetInternalAccounts(ctx, sbx, asked...)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("accounts\n%+v\nGetInternalAccounts\n%+v (%v)", got, want, err)
		}
		if len(got) != 4 || len(owners) != 2 {
			t.Fatalf("%d accounts, %d owners; want 4 (not the deleted customer's) and 2", len(got), len(owners))
		}
		for _, c := range cs[:2] {
			row, agreed, err := db.Read().LiveCustomerWithAgreements(ctx, sbx, c)
			if err != nil || !reflect.DeepEqual(owners[c], store.AccountOwner{Customer: row, Agreed: agreed}) {
				t.Fatalf("owner %s\n%+v\nLiveCustomerWithAgreements\n%+v %+v (%v)", c, owners[c], row, agreed, err)
			}
		}
		if a, o, err := db.Read().InternalAccountsWithOwners(ctx, prd, ids...); err != nil || len(a) != 0 || len(o) != 0 {
			t.Fatalf("another environment's read: %v %v %v", a, o, err)
		}
	})
}

// ownedAccount is an internal account to create: its owner ("" for the
// platform's) and type.
type ownedAccount struct{ owner, typ string }

// mustOwnedAccounts creates USD internal accounts, each with its ledger
// account, in order of creation, and returns their ids.
func mustOwnedAccounts(t *testing.T, db *store.DB, tn store.Tenant, accts ...ownedAccount) []string {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	var ids []string
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		for i, o := range accts {
			la := store.NewLedgerAccount{LedgerAccount: store.LedgerAccount{ID: id.New("LedgerAccount"), Tenant: tn,
				Currency: "USD", Kind: "INTERNAL", Name: "ia", CreatedAt: now}, BalanceRow: true}
			if _, err := tx.InsertLedgerAccountIfAbsent(ctx, la); err != nil {
				return err
			}
			a := store.InternalAccount{ID: id.New(id.InternalAccount), Tenant: tn, CustomerID: o.owner, Type: o.typ,
				Currency: "USD", Status: "ACTIVE", LedgerAccountID: la.ID, FundingReference: "ref-" + la.ID[len(la.ID)-8:],
				Instructions: []byte(`[]`), CreatedAt: now.Add(time.Duration(i)), UpdatedAt: now}
			if _, err := tx.InsertInternalAccount(ctx, a); err != nil {
				return err
			}
			ids = append(ids, a.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// mustAgree records the customer's consent to each agreement type, version
// v1.
func mustAgree(t *testing.T, db *store.DB, tn store.Tenant, customerID string, types ...string) {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, typ := range types {
			if err := tx.PutAgreementConsent(ctx, store.AgreementConsent{CustomerID: customerID, Tenant: tn, Type: typ,
				TermsVersion: "v1", AcceptedAt: now, IPAddress: "192.0.2.1", AcceptanceMethod: "API", RecordedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
