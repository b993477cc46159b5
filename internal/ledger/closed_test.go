package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// close marks accounts closed the way the customers' delete does: balance
// rows locked, then closed, in one transaction.
func (f *fixture) close(t *testing.T, accts ...ledger.Account) {
	t.Helper()
	var ids []string
	for _, a := range accts {
		ids = append(ids, a.ID)
	}
	err := f.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.LockLedgerAccounts(ctx, f.t, ids); err != nil {
			return err
		}
		return tx.CloseLedgerAccounts(ctx, f.t, ids, tx.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A closed account takes no credit — posted, pending, or from a reversal —
// unless the transfer is ToSuspense, which credits the suspense account of
// the currency instead (merged with a posting already there) and reports it.
// Without a Suspense hook, ToSuspense is refused too. Debits are untouched
// by closing (the account holds nothing to debit).
func TestClosedAccountsRefuseCreditsOrSendThemToSuspense(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		world := f.system(t, ledger.CodeWorld, "USD")
		gone, live, susp := f.internal(t, "USD"), f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, live, 1_000)
		// Money that went out of gone before it closed, to be reversed later.
		f.fund(t, gone, 300)
		out, err := f.l.Transfer(ctx, f.t, mv(gone, world, 300), "payout")
		if err != nil {
			t.Fatal(err)
		}
		f.close(t, gone)
		before := f.counts(t)
		refused := func(what string, err error) {
			t.Helper()
			var ae *ledger.AccountError
			if !errors.Is(err, ledger.ErrAccountClosed) || !errors.As(err, &ae) || ae.AccountID != gone.ID {
				t.Fatalf("%s: %v, want ErrAccountClosed on %s", what, err, gone.ID)
			}
		}
		_, err = f.l.Transfer(ctx, f.t, mv(live, gone, 10), "")
		refused("transfer", err)
		_, err = f.l.Hold(ctx, f.t, mv(live, gone, 10), "")
		refused("hold", err)
		_, err = f.l.Reverse(ctx, f.t, out.ID)
		refused("reversal", err)
		_, err = f.l.Commit(ctx, f.t, []ledger.TransferSpec{{Kind: ledger.KindReversal, ReversesID: out.ID, ToSuspense: true}})
		refused("to suspense without a hook", err)
		if f.counts(t) != before {
			t.Fatal("a refused credit wrote something")
		}
		f.wantBalance(t, gone, 0, 0, 0)

		f.l.Suspense = func(_ context.Context, _ *store.Tx, _ store.Tenant, cur string) (string, error) {
			if cur != "USD" {
				return "", errors.New("no suspense in " + cur)
			}
			return susp.ID, nil
		}
		trs, err := f.l.Commit(ctx, f.t, []ledger.TransferSpec{{Kind: ledger.KindReversal, ReversesID: out.ID, ToSuspense: true}})
		if err != nil {
			t.Fatal(err)
		}
		if r := trs[0].Redirects; len(r) != 1 || r[0].ClosedAccountID != gone.ID || r[0].SuspenseAccountID != susp.ID || r[0].Amount != 300 {
			t.Fatalf("redirects %+v", r)
		}
		f.wantBalance(t, gone, 0, 0, 0)
		f.wantBalance(t, susp, 300, 0, 0)
		// A transfer that already credits suspense: the redirected credit is
		// merged into that posting.
		trs, err = f.l.Commit(ctx, f.t, []ledger.TransferSpec{{ToSuspense: true, Postings: []ledger.PostingSpec{
			{AccountID: live.ID, Currency: "USD", Amount: -30},
			{AccountID: gone.ID, Currency: "USD", Amount: 20},
			{AccountID: susp.ID, Currency: "USD", Amount: 10},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if ps := trs[0].Postings; len(ps) != 2 {
			t.Fatalf("postings %+v, want live -30 and suspense +30", ps)
		}
		f.wantBalance(t, susp, 330, 0, 0)
		f.wantBalance(t, live, 970, 0, 0)
		f.wantBalance(t, gone, 0, 0, 0)
		f.audit(t)
	})
}
