package store_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// R-STMT-07 rests on the statement buckets being exact: the buckets added as
// postings are written, those rebuilt from the postings, and those migration
// 0013 backfills all equal the hour and day sums of the posted postings of
// every account with a balance row (hot accounts have none), including
// postings written out of time order and before 1970; and the posted sum
// before any instant read through them equals the postings' sum.
func TestLedgerBuckets_R_STMT_07_AddedRebuiltAndBackfilledMatchPostings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		now := db.Now().UTC().Truncate(time.Microsecond)
		account := func(hot bool) string {
			a := store.NewLedgerAccount{LedgerAccount: store.LedgerAccount{ID: id.New("LedgerAccount"), Tenant: tn,
				Currency: "USD", Kind: "SYSTEM", Hot: hot, Name: "a", CreatedAt: now}, BalanceRow: !hot}
			if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.InsertLedgerAccountIfAbsent(ctx, a); return err }); err != nil {
				t.Fatal(err)
			}
			return a.ID
		}
		accts := []string{account(false), account(false), account(true)}
		hot := accts[2]

		r := rand.New(rand.NewPCG(3, 5))
		bases := []time.Time{time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0).UTC()}
		instant := func() time.Time {
			base := bases[r.IntN(len(bases))]
			d := time.Duration(r.Int64N(int64(72*time.Hour))) - 24*time.Hour
			if r.IntN(4) == 0 {
				d = d.Truncate(time.Hour) // on a boundary
			}
			return base.Add(d.Truncate(time.Microsecond))
		}
		var postings []store.LedgerPosting
		for range 8 {
			var trs []store.LedgerTransfer
			var ps, bucketed []store.LedgerPosting
			for range 50 {
				tr := store.LedgerTransfer{ID: id.New("LedgerTransfer"), Tenant: tn, Kind: "TRANSFER", CreatedAt: instant()}
				from, to := accts[r.IntN(3)], accts[r.IntN(3)]
				for to == from {
					to = accts[r.IntN(3)]
				}
				amount, pending := int64(r.IntN(1000)+1), r.IntN(10) == 0
				for _, p := range []store.LedgerPosting{{AccountID: from, Amount: -amount}, {AccountID: to, Amount: amount}} {
					p.ID, p.Tenant, p.TransferID, p.Currency, p.Pending, p.CreatedAt = id.New("Posting"), tn, tr.ID, "USD", pending, tr.CreatedAt
					ps = append(ps, p)
					if !pending && p.AccountID != hot {
						bucketed = append(bucketed, p)
					}
				}
				trs = append(trs, tr)
			}
			err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.WriteLedger(ctx, tn, trs, ps, bucketed, nil, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			postings = append(postings, ps...)
		}

		// The sums, with time.Truncate as an independent rounding (down,
		// also before 1970).
		want := map[store.LedgerBucketKey]int64{}
		for _, p := range postings {
			if p.Pending || p.AccountID == hot {
				continue
			}
			for _, span := range []time.Duration{time.Hour, 24 * time.Hour} {
				k := store.LedgerBucketKey{AccountID: p.AccountID, Span: span.Microseconds(),
					BucketStart: p.CreatedAt.Truncate(span).UnixMicro()}
				want[k] += p.Amount
			}
		}
		check := func(how string) {
			t.Helper()
			got, err := db.LedgerBucketsForTest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range got {
				if v != want[k] {
					t.Fatalf("%s: bucket %+v holds %d, postings say %d", how, k, v, want[k])
				}
			}
			for k, v := range want {
				if v != got[k] {
					t.Fatalf("%s: bucket %+v holds %d, postings say %d", how, k, got[k], v)
				}
			}
			if ms, err := db.Read().LedgerBucketMismatches(ctx, tn); err != nil || len(ms) != 0 {
				t.Fatalf("%s: mismatches %+v, %v", how, ms, err)
			}
		}
		check("added")

		// Damaged, as SQL that bypasses the buckets leaves them; then rebuilt.
		for _, q := range []string{
			"DELETE FROM ledger_posting_buckets WHERE span = 3600000000",
			"UPDATE ledger_posting_buckets SET amount = amount + 7 WHERE account_id = '" + accts[0] + "'",
			"INSERT INTO ledger_posting_buckets (account_id, span, bucket_start, amount) VALUES ('" + accts[1] + "', 86400000000, -8640000000000, 5)",
		} {
			if err := db.ExecRaw(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if ms, err := db.Read().LedgerBucketMismatches(ctx, tn); err != nil || len(ms) < 3 {
			t.Fatalf("damaged buckets: mismatches %+v, %v", ms, err)
		}
		if err := db.RebuildLedgerPostingBuckets(ctx); err != nil {
			t.Fatal(err)
		}
		check("rebuilt")

		// Migration 0013 again, on postings written before it.
		for _, q := range []string{"DROP TABLE ledger_posting_buckets", "DELETE FROM schema_migrations WHERE version = 13"} {
			if err := db.ExecRaw(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		check("backfilled")

		// The balance rows, as the ledger would have kept them.
		for _, a := range accts[:2] {
			var posted int64
			for _, p := range postings {
				if p.AccountID == a && !p.Pending {
					posted += p.Amount
				}
			}
			err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.ChangeLedgerBalance(ctx, tn, store.LedgerBalanceChange{AccountID: a, Posted: posted}, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		var checks []*time.Time
		for range 300 {
			at := instant()
			checks = append(checks, &at)
		}
		for _, p := range postings[:100] {
			at := p.CreatedAt
			checks = append(checks, &at)
		}
		checks = append(checks, nil)
		for _, a := range accts {
			for _, at := range checks {
				var sum int64
				for _, p := range postings {
					if p.AccountID == a && !p.Pending && (at == nil || p.CreatedAt.Before(*at)) {
						sum += p.Amount
					}
				}
				got, err := db.Read().LedgerPostedSumBefore(ctx, tn, a, at)
				if err != nil || got != sum {
					t.Fatalf("account %s: posted sum before %v = %d (%v), postings say %d", a, at, got, err, sum)
				}
			}
		}
	})
}
