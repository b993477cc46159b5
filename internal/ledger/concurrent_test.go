package ledger_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// 50 goroutines move random amounts between 20 funded INTERNAL accounts
// through the hot system accounts (clearing, fees, world): transfers with
// fees, two-transfer batches through clearing, holds that later post or
// void, deposits, payouts and reversals. Many attempts are refused for
// insufficient funds; no other error is acceptable (on PostgreSQL a deadlock
// would surface here). At the end every invariant holds (Audit), every
// internal balance is non-negative, and the money on internal accounts is
// exactly the funding plus the net effect of the operations that succeeded.
func TestConcurrent_50Goroutines20Accounts(t *testing.T) {
	const goroutines, accounts, funding = 50, 20, 10_000
	opsEach := 40
	if testing.Short() {
		opsEach = 10
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel() // the engines share nothing
			concurrent50x20(t, e.Open(t), goroutines, accounts, funding, opsEach)
		})
	}
}

func concurrent50x20(t *testing.T, db *store.DB, goroutines, accounts int, funding int64, opsEach int) {
	f := newFixture(t, db)
	world := f.system(t, ledger.CodeWorld, "USD")
	clearing := f.system(t, ledger.CodeClearing, "USD")
	fees := f.system(t, ledger.CodeServiceFees, "USD")
	var accts []ledger.Account
	var fund []ledger.TransferSpec
	for range accounts {
		a := f.internal(t, "USD")
		accts = append(accts, a)
		fund = append(fund, ledger.TransferSpec{Postings: mv(world, a, funding)})
	}
	if _, err := f.l.Commit(ctx, f.t, fund); err != nil {
		t.Fatal(err)
	}

	var internalDelta, ok, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 42))
			type done struct {
				id     string
				effect int64 // on the internal total
			}
			var holds []done // pending holds: effect if posted
			var reversible []done
			pick := func() (ledger.Account, ledger.Account) {
				a, b := accts[r.IntN(accounts)], accts[r.IntN(accounts)]
				for b.ID == a.ID {
					b = accts[r.IntN(accounts)]
				}
				return a, b
			}
			for range opsEach {
				a, b := pick()
				x := 1 + r.Int64N(3*funding/10)
				fee := 1 + x/100
				var batch []ledger.TransferSpec
				var effect int64
				kind := r.IntN(100)
				switch {
				case kind < 35: // A -> B with a fee
					batch = []ledger.TransferSpec{{Postings: []ledger.PostingSpec{
						{AccountID: a.ID, Currency: "USD", Amount: -(x + fee)},
						{AccountID: b.ID, Currency: "USD", Amount: x},
						{AccountID: fees.ID, Currency: "USD", Amount: fee}}}}
					effect = -fee
				case kind < 55: // A -> clearing -> B, one batch
					batch = []ledger.TransferSpec{
						{Postings: []ledger.PostingSpec{
							{AccountID: a.ID, Currency: "USD", Amount: -(x + fee)},
							{AccountID: clearing.ID, Currency: "USD", Amount: x},
							{AccountID: fees.ID, Currency: "USD", Amount: fee}}},
						{Postings: mv(clearing, b, x)},
					}
					effect = -fee
				case kind < 70: // hold A -> clearing (a payout in flight)
					batch = []ledger.TransferSpec{{Kind: ledger.KindHold, Postings: mv(a, clearing, x)}}
				case kind < 80 && len(holds) > 0: // resolve one of our holds
					i := r.IntN(len(holds))
					h := holds[i]
					holds = append(holds[:i], holds[i+1:]...)
					if r.IntN(2) == 0 {
						batch = []ledger.TransferSpec{{Kind: ledger.KindPost, HoldID: h.id}}
						effect = h.effect
					} else {
						batch = []ledger.TransferSpec{{Kind: ledger.KindVoid, HoldID: h.id}}
					}
				case kind < 87: // deposit
					batch = []ledger.TransferSpec{{Postings: mv(world, a, x/4)}}
					effect = x / 4
				case kind < 94: // payout
					batch = []ledger.TransferSpec{{Postings: mv(a, world, x)}}
					effect = -x
				case len(reversible) > 0: // reverse one of ours
					i := r.IntN(len(reversible))
					rv := reversible[i]
					reversible = append(reversible[:i], reversible[i+1:]...)
					batch = []ledger.TransferSpec{{Kind: ledger.KindReversal, ReversesID: rv.id}}
					effect = -rv.effect
				default:
					continue
				}
				out, err := f.l.Commit(ctx, f.t, batch)
				switch {
				case errors.Is(err, ledger.ErrInsufficientFunds):
					refused.Add(1)
					continue
				case err != nil:
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				ok.Add(1)
				internalDelta.Add(effect)
				switch {
				case batch[0].Kind == ledger.KindHold:
					holds = append(holds, done{id: out[0].ID, effect: -x})
				case len(out) == 1 && batch[0].Kind != ledger.KindVoid:
					reversible = append(reversible, done{id: out[0].ID, effect: effect})
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d committed, %d refused for insufficient funds", ok.Load(), refused.Load())
	if refused.Load() < 20 || ok.Load() < 200 {
		t.Fatalf("%d committed, %d refused: the test is not exercising the overdraft check", ok.Load(), refused.Load())
	}
	f.audit(t)
	var total int64
	for _, a := range accts {
		b := f.balance(t, a)
		if b.Available < 0 || b.Posted < 0 {
			t.Fatalf("account %s: %+v", a.ID, b)
		}
		total += b.Posted
	}
	if want := int64(accounts)*funding + internalDelta.Load(); total != want {
		t.Fatalf("internal accounts hold %d, want %d", total, want)
	}
	// Every currency's balances sum to zero: internal money is exactly
	// what the system accounts owe.
	var system int64
	for _, a := range []ledger.Account{world, clearing, fees} {
		system += f.balance(t, a).Posted
	}
	if system+total != 0 {
		t.Fatalf("system %d + internal %d != 0", system, total)
	}
}
