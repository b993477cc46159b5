package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

var ctx = context.Background()

// fixture is a fresh tenant on one store.
type fixture struct {
	db *store.DB
	l  *ledger.Service
	t  store.Tenant
}

func newFixture(t testing.TB, db *store.DB) *fixture {
	t.Helper()
	return &fixture{db: db, l: ledger.New(db), t: newTenant(t, db)}
}

func newTenant(t testing.TB, db *store.DB) store.Tenant {
	t.Helper()
	p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: time.Now()}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }); err != nil {
		t.Fatal(err)
	}
	return store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
}

func (f *fixture) internal(t testing.TB, cur string) ledger.Account {
	t.Helper()
	a, err := f.l.CreateAccount(ctx, f.t, ledger.AccountSpec{Currency: cur, Kind: ledger.Internal, Name: "customer"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *fixture) system(t testing.TB, code, cur string) ledger.Account {
	t.Helper()
	a, err := f.l.SystemAccount(ctx, f.t, code, cur)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fund moves amount from the world into a.
func (f *fixture) fund(t testing.TB, a ledger.Account, amount int64) ledger.Transfer {
	t.Helper()
	w := f.system(t, ledger.CodeWorld, a.Currency)
	tr, err := f.l.Transfer(ctx, f.t, mv(w, a, amount), "fund")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func (f *fixture) balance(t testing.TB, a ledger.Account) ledger.Balance {
	t.Helper()
	b, err := f.l.Balance(ctx, f.t, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantBalance checks posted, pending debits and pending credits.
func (f *fixture) wantBalance(t testing.TB, a ledger.Account, posted, pendingDebits, pendingCredits int64) {
	t.Helper()
	b := f.balance(t, a)
	if b.Posted != posted || b.PendingDebits != pendingDebits || b.PendingCredits != pendingCredits ||
		b.Available != posted-pendingDebits || b.Pending != pendingCredits-pendingDebits {
		t.Fatalf("balance of %s = %+v, want posted %d, pending debits %d, pending credits %d",
			a.Code+a.Name, b, posted, pendingDebits, pendingCredits)
	}
}

func (f *fixture) audit(t testing.TB) {
	t.Helper()
	if err := f.l.Audit(ctx, f.t); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) counts(t testing.TB) store.LedgerCounts {
	t.Helper()
	c, err := f.db.Read().CountLedgerRows(ctx, f.t)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mv is the two postings moving amount from one account to another.
func mv(from, to ledger.Account, amount int64) []ledger.PostingSpec {
	return []ledger.PostingSpec{
		{AccountID: from.ID, Currency: from.Currency, Amount: -amount},
		{AccountID: to.ID, Currency: to.Currency, Amount: amount},
	}
}
