package ledger_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// R-STMT-06 and R-STMT-07: openingBalance and closingBalance are the posted
// balance at startDate and endDate. Read from the hour and day buckets Apply
// keeps, it must equal the sum of the postings before the instant, to the
// microsecond and at every bucket boundary, even when transfers commit out of
// created_at order (as concurrent ones may: each takes its time before it
// waits on locks).
func TestStatement_R_STMT_06_R_STMT_07_PostedSumBeforeIsExact(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		world := f.system(t, ledger.CodeWorld, "USD")     // hot: summed from postings
		cards := f.system(t, ledger.CodeCardHolds, "USD") // quiet SYSTEM: buckets
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		accts := []ledger.Account{world, cards, a, b}

		r := rand.New(rand.NewPCG(7, 13))
		base := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
		const days = 5
		// Instants in random order: anywhere, on an hour or a day boundary,
		// or a microsecond either side of one.
		instant := func() time.Time {
			hour := base.Add(time.Duration(r.IntN(days*24)) * time.Hour)
			switch r.IntN(5) {
			case 0:
				return hour
			case 1:
				return hour.Add(-time.Microsecond)
			case 2:
				return hour.Add(time.Microsecond)
			case 3:
				return base.Add(time.Duration(r.IntN(days)) * 24 * time.Hour)
			}
			return base.Add(time.Duration(r.Int64N(int64(days*24*time.Hour))) / time.Microsecond * time.Microsecond)
		}
		var clock time.Time
		db.SetClock(func() time.Time { return clock })
		defer db.SetClock(time.Now)
		commit := func(at time.Time, batch ...ledger.TransferSpec) []ledger.Transfer {
			t.Helper()
			clock = at
			trs, err := f.l.Commit(ctx, f.t, batch)
			if err != nil {
				t.Fatal(err)
			}
			return trs
		}
		move := func(from, to ledger.Account, amount int64) ledger.TransferSpec {
			return ledger.TransferSpec{Postings: mv(from, to, amount)}
		}
		commit(instant(), move(world, a, 1_000_000), move(world, b, 1_000_000))

		var reversible, holds []string
		for range 300 {
			x, y := accts[r.IntN(len(accts))], accts[r.IntN(len(accts))]
			for y.ID == x.ID {
				y = accts[r.IntN(len(accts))]
			}
			amount := int64(r.IntN(500) + 1)
			switch op := r.IntN(10); {
			case op < 6: // one to three transfers at one instant
				batch := []ledger.TransferSpec{move(x, y, amount)}
				for range r.IntN(3) {
					batch = append(batch, move(y, x, int64(r.IntN(100)+1)))
				}
				for _, tr := range commit(instant(), batch...) {
					reversible = append(reversible, tr.ID)
				}
			case op < 8:
				hold := ledger.TransferSpec{Kind: ledger.KindHold, Postings: mv(x, y, amount)}
				holds = append(holds, commit(instant(), hold)[0].ID)
			case op == 8 && len(holds) > 0: // posted later, or earlier, than held
				i := r.IntN(len(holds))
				kind := ledger.KindPost
				if r.IntN(3) == 0 {
					kind = ledger.KindVoid
				}
				commit(instant(), ledger.TransferSpec{Kind: kind, HoldID: holds[i]})
				holds = append(holds[:i], holds[i+1:]...)
			case op == 9 && len(reversible) > 0:
				i := r.IntN(len(reversible))
				commit(instant(), ledger.TransferSpec{Kind: ledger.KindReversal, ReversesID: reversible[i]})
				reversible = append(reversible[:i], reversible[i+1:]...)
			}
		}
		f.audit(t) // buckets equal their postings

		q := db.Read()
		var checks []time.Time
		for h := -2; h <= days*24+2; h++ {
			hour := base.Add(time.Duration(h) * time.Hour)
			checks = append(checks, hour, hour.Add(-time.Microsecond), hour.Add(time.Microsecond))
		}
		for range 200 {
			checks = append(checks, base.Add(time.Duration(r.Int64N(int64(days*24*time.Hour)))))
		}
		other := newTenant(t, db)
		for _, acct := range accts {
			var postings []store.LedgerPosting
			var cursor *store.LedgerPostingCursor
			for {
				page, err := q.LedgerStatement(ctx, f.t, acct.ID, nil, nil, cursor, 1000)
				if err != nil {
					t.Fatal(err)
				}
				postings = append(postings, page...)
				if len(page) < 1000 {
					break
				}
				last := page[len(page)-1]
				cursor = &store.LedgerPostingCursor{CreatedAt: last.CreatedAt, ID: last.ID}
			}
			at := append([]time.Time(nil), checks...)
			for _, p := range postings {
				at = append(at, p.CreatedAt, p.CreatedAt.Add(time.Microsecond), p.CreatedAt.Add(time.Nanosecond))
			}
			for _, instant := range at {
				var want int64
				for _, p := range postings {
					// The store keeps microseconds: a finer instant counts
					// from its microsecond, as it always has.
					if p.CreatedAt.Before(instant.Truncate(time.Microsecond)) {
						want += p.Amount
					}
				}
				got, err := q.LedgerPostedSumBefore(ctx, f.t, acct.ID, &instant)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%s: posted sum before %s = %d, postings say %d", acct.Code+acct.Name, instant.Format(time.RFC3339Nano), got, want)
				}
			}
			var all int64
			for _, p := range postings {
				all += p.Amount
			}
			if got, err := q.LedgerPostedSumBefore(ctx, f.t, acct.ID, nil); err != nil || got != all {
				t.Fatalf("%s: posted sum of all = %d (%v), postings say %d", acct.Code+acct.Name, got, err, all)
			}
			// Another tenant sees nothing of the account.
			end := base.Add(days * 24 * time.Hour)
			for _, instant := range []*time.Time{nil, &end} {
				if got, err := q.LedgerPostedSumBefore(ctx, other, acct.ID, instant); err != nil || got != 0 {
					t.Fatalf("%s from another tenant: %d, %v", acct.Code+acct.Name, got, err)
				}
			}
		}
	})
}
