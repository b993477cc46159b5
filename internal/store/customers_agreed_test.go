package store_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// LiveCustomerWithAgreements reads the customer (as GetCustomer does) and
// its agreements in one query, and tells a missing (or deleted, or another
// tenant's) customer from one that accepted nothing.
func TestLiveCustomerWithAgreements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		cs := mustCustomers(t, db, sbx, "a-1", "a-2", "a-3")
		mustAgree(t, db, sbx, cs[0], "PRIVACY_POLICY", "END_USER_TERMS")
		deleteCustomer(t, db, sbx, cs[2])
		c, got, err := db.Read().LiveCustomerWithAgreements(ctx, sbx, cs[0])
		if err != nil || len(got) != 2 || got[0] != (store.AgreedTerms{Type: "END_USER_TERMS", TermsVersion: "v1"}) || got[1].Type != "PRIVACY_POLICY" {
			t.Fatalf("%+v %v", got, err)
		}
		want, err := db.Read().GetCustomer(ctx, sbx, cs[0], false)
		if err != nil || !reflect.DeepEqual(c, want) {
			t.Fatalf("customer read with its agreements\n%+v\nGetCustomer\n%+v (%v)", c, want, err)
		}
		if c, got, err := db.Read().LiveCustomerWithAgreements(ctx, sbx, cs[1]); err != nil || got == nil || len(got) != 0 || c.ID != cs[1] {
			t.Fatalf("a customer without agreements: %s %+v %v", c.ID, got, err)
		}
		for name, c := range map[string]struct {
			tn store.Tenant
			id string
		}{"deleted": {sbx, cs[2]}, "other environment": {prd, cs[0]}, "unknown": {sbx, "Customer:nope"}} {
			if _, _, err := db.Read().LiveCustomerWithAgreements(ctx, c.tn, c.id); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s customer: %v", name, err)
			}
		}
	})
}
