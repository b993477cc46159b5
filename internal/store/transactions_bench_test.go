package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// BenchmarkListTransactions times the first page of GET /transactions as
// the store serves it (newest first, limit 20 + 1) at two table sizes. The
// counted scopes should cost the same at both; "type" still counts rows.
//
//	go test -run '^$' -bench ListTransactions -benchtime 200x ./internal/store/
//
// (PostgreSQL too when PAYMENTS_TEST_POSTGRES_URL is set.)
func BenchmarkListTransactions(b *testing.B) {
	for _, e := range storetest.Engines(b) {
		for _, n := range []int{10_000, 200_000} {
			b.Run(fmt.Sprintf("%s/n=%d", e.Name, n), func(b *testing.B) {
				db := e.Open(b)
				p := store.Platform{ID: id.New(id.Platform), Name: "p", IsDefault: true, CreatedAt: time.Now()}
				if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }); err != nil {
					b.Fatal(err)
				}
				tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
				now := db.Now().UTC().Truncate(time.Microsecond)
				var owners []string
				err := db.InTx(ctx, func(tx *store.Tx) error {
					for i := range 100 {
						c := custRow(tn, fmt.Sprintf("p-%d", i), now)
						owners = append(owners, c.ID)
						if err := tx.InsertCustomer(ctx, c); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				owners = append(owners, "") // the platform's own: 1 in 101
				const batch = 5000
				for done := 0; done < n; done += batch {
					err := db.InTx(ctx, func(tx *store.Tx) error {
						for i := done; i < min(done+batch, n); i++ {
							typ := "INCOMING"
							if i%2 == 1 {
								typ = "OUTGOING"
							}
							if _, err := tx.CreateTransaction(ctx, txnRow(tn, owners[i%len(owners)], typ, "COMPLETED", now)); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				// Settle the new rows first, so autovacuum does not run
				// during the timing on PostgreSQL.
				settle := "ANALYZE"
				if db.Engine() == store.Postgres {
					settle = "VACUUM ANALYZE"
				}
				if err := db.ExecRaw(ctx, settle); err != nil {
					b.Fatal(err)
				}
				for _, c := range []struct {
					name string
					f    store.TransactionFilter
				}{
					{"all", store.TransactionFilter{}},
					{"customer", store.TransactionFilter{CustomerID: owners[7]}},
					{"platformCustomerId", store.TransactionFilter{PlatformCustomerID: "p-7"}},
					{"platform", store.TransactionFilter{PlatformOnly: true}},
					{"type(scan)", store.TransactionFilter{Type: "INCOMING"}},
				} {
					c.f.Descending = true
					b.Run(c.name, func(b *testing.B) {
						for b.Loop() {
							rows, total, err := db.Read().ListTransactions(ctx, tn, c.f, "", 21)
							if err != nil || len(rows) != 21 || total < 21 {
								b.Fatalf("%d rows, total %d, %v", len(rows), total, err)
							}
						}
					})
				}
			})
		}
	}
}
