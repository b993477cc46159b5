package ledger_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// BenchmarkCommitTransfer commits one transfer per operation: A -> B between
// 100 funded internal accounts, with a fee to the hot service-fees account.
// "parallel" runs GOMAXPROCS×8 committers at once; "batch100" commits 100
// such transfers per database transaction (ns/op is per transfer).
//
//	go test -run '^$' -bench CommitTransfer ./internal/ledger/
func BenchmarkCommitTransfer(b *testing.B) {
	for _, e := range storetest.Engines(b) {
		for _, mode := range []string{"sequential", "parallel", "batch100"} {
			b.Run(e.Name+"/"+mode, func(b *testing.B) {
				f := newFixture(b, e.Open(b))
				world := f.system(b, ledger.CodeWorld, "USD")
				fees := f.system(b, ledger.CodeServiceFees, "USD")
				var accts []ledger.Account
				var fund []ledger.TransferSpec
				for range 100 {
					a := f.internal(b, "USD")
					accts = append(accts, a)
					fund = append(fund, ledger.TransferSpec{Postings: mv(world, a, 1<<40)})
				}
				if _, err := f.l.Commit(ctx, f.t, fund); err != nil {
					b.Fatal(err)
				}
				spec := func(r *rand.Rand) ledger.TransferSpec {
					from, to := accts[r.IntN(len(accts))], accts[r.IntN(len(accts))]
					for to.ID == from.ID {
						to = accts[r.IntN(len(accts))]
					}
					return ledger.TransferSpec{Postings: []ledger.PostingSpec{
						{AccountID: from.ID, Currency: "USD", Amount: -101},
						{AccountID: to.ID, Currency: "USD", Amount: 100},
						{AccountID: fees.ID, Currency: "USD", Amount: 1}}}
				}
				commit := func(r *rand.Rand, n int) {
					batch := make([]ledger.TransferSpec, n)
					for i := range batch {
						batch[i] = spec(r)
					}
					if _, err := f.l.Commit(ctx, f.t, batch); err != nil {
						b.Error(err)
					}
				}
				b.ResetTimer()
				switch mode {
				case "sequential":
					r := rand.New(rand.NewPCG(1, 2))
					for b.Loop() {
						commit(r, 1)
					}
				case "batch100":
					r := rand.New(rand.NewPCG(1, 2))
					for i := 0; i < b.N; i += 100 {
						commit(r, min(100, b.N-i))
					}
				case "parallel":
					b.SetParallelism(8)
					b.RunParallel(func(pb *testing.PB) {
						r := rand.New(rand.NewPCG(rand.Uint64(), 2))
						for pb.Next() {
							commit(r, 1)
						}
					})
				}
			})
		}
	}
}

// BenchmarkLedgerPostedSumBefore reads an account's posted balance at a
// random instant of its history (a statement's opening or closing balance)
// when the account has 10k and 200k postings spread over the same 30 days,
// the shape `paymentsbench seed` gives a database. The cost should not grow
// with the number of postings. The last case spreads 10k postings over a
// year and reads within its last day (a statement of the last 24 hours of
// an old account): the cost should not grow with the account's age either.
//
//	go test -run '^$' -bench LedgerPostedSumBefore -benchtime 2000x ./internal/ledger/
func BenchmarkLedgerPostedSumBefore(b *testing.B) {
	cases := []struct {
		n          int
		span, last time.Duration // history; instants read in its last part
	}{{10_000, 30 * 24 * time.Hour, 30 * 24 * time.Hour}, {200_000, 30 * 24 * time.Hour, 30 * 24 * time.Hour},
		{10_000, 365 * 24 * time.Hour, 24 * time.Hour}}
	for _, e := range storetest.Engines(b) {
		for _, c := range cases {
			n, span := c.n, c.span
			b.Run(fmt.Sprintf("%s/postings=%d/days=%d/last=%s", e.Name, n, span/(24*time.Hour), c.last), func(b *testing.B) {
				db := e.Open(b)
				f := newFixture(b, db)
				world := f.system(b, ledger.CodeWorld, "USD")
				a := f.internal(b, "USD")
				base := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
				const perBatch = 100
				for i := 0; i < n; i += perBatch {
					clock := base.Add(span * time.Duration(i) / time.Duration(n))
					db.SetClock(func() time.Time { return clock })
					batch := make([]ledger.TransferSpec, perBatch)
					for j := range batch {
						batch[j] = ledger.TransferSpec{Postings: mv(world, a, 1)}
					}
					if _, err := f.l.Commit(ctx, f.t, batch); err != nil {
						b.Fatal(err)
					}
				}
				db.SetClock(time.Now)
				q := db.Read()
				r := rand.New(rand.NewPCG(1, 2))
				for b.Loop() {
					at := base.Add(span - time.Duration(r.Int64N(int64(c.last))))
					if _, err := q.LedgerPostedSumBefore(ctx, f.t, a.ID, &at); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
