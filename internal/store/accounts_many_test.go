package store_test

import (
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
		now := db.Now().UTC().Truncate(time.Microsecond)
		var ids []string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for i, owner := range []string{cs[0], cs[1], ""} {
				la := store.NewLedgerAccount{LedgerAccount: store.LedgerAccount{ID: id.New("LedgerAccount"), Tenant: sbx,
					Currency: "USD", Kind: "INTERNAL", Name: "ia", CreatedAt: now}, BalanceRow: true}
				if _, err := tx.InsertLedgerAccountIfAbsent(ctx, la); err != nil {
					return err
				}
				a := store.InternalAccount{ID: id.New(id.InternalAccount), Tenant: sbx, CustomerID: owner, Type: "INTERNAL_FIAT",
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
