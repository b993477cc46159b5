package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// A batch locks (PostgreSQL) or reads (SQLite) its declared balance rows when it begins and
// its fns' ledger decisions read them from memory, kept as the transaction
// has them (balance_cache.go). One batch, fns in order: two transfers from
// the cache (the second must see the first's write, or its version check
// fails), one rolled back after writing (the rollback must empty the
// cache), one that spends exactly what is left (it would be refused if the
// rolled-back debit were still counted), one refused for want of funds.
// SQLite's batch reads the rows (its one writer needs no lock) and must
// answer the same.
func TestBalanceCache_BatchDecidesFromTheRowsItLocked(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		accts := c.accounts(t, 2, 1000)
		a, b := accts[0].ID, accts[1].ID
		boom := errors.New("boom")
		pay := func(amount int64, cached bool, then error) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				if got := tx.BalancesCachedForTest(c.t, a, b); got != cached {
					t.Errorf("paying %d: rows cached %v, want %v", amount, got, cached)
				}
				_, err := c.l.Apply(context.Background(), tx, c.t, []ledger.TransferSpec{{Postings: move(a, b, amount)}})
				if err != nil {
					return err
				}
				return then
			}
		}
		errs := db.RunBatchForTest(c.t, []string{a, b},
			pay(100, true, nil),
			pay(200, true, nil),
			pay(300, true, boom),
			pay(700, false, nil),
			pay(1, false, nil),
		)
		var short *ledger.InsufficientFundsError
		if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], boom) || errs[3] != nil || !errors.As(errs[4], &short) {
			t.Fatalf("answers %v; want nil, nil, boom, nil, insufficient funds", errs)
		}
		if got := c.posted(t, accts[0]); got != 0 {
			t.Fatalf("payer holds %d, want 0", got)
		}
		if got := c.posted(t, accts[1]); got != 2000 {
			t.Fatalf("payee holds %d, want 2000", got)
		}
		if err := c.l.Audit(ctx, c.t); err != nil {
			t.Fatal(err)
		}
	})
}

// Any other statement that changes balance rows empties the cache, so a
// later fn of the batch reads what it did: here an account closed by one
// fn is seen closed by the next, which then cannot pay into it.
func TestBalanceCache_OtherWritesEmptyIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCommitterLedger(t, db)
		accts := c.accounts(t, 2, 1000)
		a, b := accts[0].ID, accts[1].ID
		errs := db.RunBatchForTest(c.t, []string{a, b},
			func(tx *store.Tx) error {
				if _, err := tx.LockLedgerAccounts(ctx, c.t, []string{b}); err != nil {
					return err
				}
				return tx.CloseLedgerAccounts(ctx, c.t, []string{b}, tx.Now())
			},
			func(tx *store.Tx) error {
				if tx.BalancesCachedForTest(c.t, a, b) {
					t.Error("the cache outlived a write it did not make")
				}
				locked, err := tx.LockLedgerAccounts(ctx, c.t, []string{a, b})
				if err != nil {
					return err
				}
				if !locked[b].Closed {
					t.Error("the account closed by the fn before is read open")
				}
				_, err = c.l.Apply(context.Background(), tx, c.t, []ledger.TransferSpec{{Postings: move(a, b, 10)}})
				return err
			},
		)
		if errs[0] != nil || !errors.Is(errs[1], ledger.ErrAccountClosed) {
			t.Fatalf("answers %v; want nil, account closed", errs)
		}
		if got := c.posted(t, accts[1]); got != 1000 {
			t.Fatalf("closed account holds %d, want 1000", got)
		}
	})
}
