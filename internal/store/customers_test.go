package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func custRow(tn store.Tenant, pcid string, now time.Time) store.Customer {
	return store.Customer{ID: id.New(id.Customer), Tenant: tn, PlatformCustomerID: pcid, Type: "INDIVIDUAL",
		Status: "UNVERIFIED", Currencies: []string{"USD", "EUR"}, Region: "DE", Profile: []byte(`{}`), CreatedAt: now, UpdatedAt: now}
}

// platformCustomerId is unique among a tenant's live customers only (a
// partial unique index on both engines); deleted rows stay; every read is
// scoped by tenant.
func TestCustomers_LiveUniquenessAndTenancy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sbx := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prd := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		now := db.Now().UTC().Truncate(time.Microsecond)
		insert := func(c store.Customer) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCustomer(ctx, c) })
		}
		first := custRow(sbx, "p-1", now)
		if err := insert(first); err != nil {
			t.Fatal(err)
		}
		if err := insert(custRow(sbx, "p-1", now)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate live platformCustomerId: %v", err)
		}
		if err := insert(custRow(prd, "p-1", now)); err != nil {
			t.Fatalf("another environment is another tenant: %v", err)
		}
		if _, err := db.Read().GetCustomer(ctx, prd, first.ID, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("cross-tenant read: %v", err)
		}
		got, err := db.Read().GetCustomer(ctx, sbx, first.ID, false)
		if err != nil || got.Region != "DE" || len(got.Currencies) != 2 || got.Currencies[1] != "EUR" {
			t.Fatalf("%+v %v", got, err)
		}
		got.DeletedAt, got.UpdatedAt = &now, now
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateCustomer(ctx, got) }); err != nil {
			t.Fatal(err)
		}
		if err := insert(custRow(sbx, "p-1", now)); err != nil {
			t.Fatalf("a deleted customer's id is free: %v", err)
		}
		if _, err := db.Read().GetCustomer(ctx, sbx, first.ID, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("deleted customers are not read")
		}
		list, total, err := db.Read().ListCustomers(ctx, sbx, store.CustomerFilter{Currency: "EUR"}, "", 10)
		if err != nil || total != 1 || len(list) != 1 {
			t.Fatalf("%d %d %v", total, len(list), err)
		}
		if _, n, _ := db.Read().ListCustomers(ctx, sbx, store.CustomerFilter{Currency: "US"}, "", 10); n != 0 {
			t.Fatal("a currency filter matches whole codes")
		}
		counts, err := db.Read().CustomerRowCounts(ctx)
		if err != nil || counts["customers"] != 3 {
			t.Fatalf("the deleted row is kept: %v %v", counts, err)
		}
	})
}
