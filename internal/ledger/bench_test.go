package ledger_test

import (
	"math/rand/v2"
	"testing"

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
