package rails

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

var ctx = context.Background()

// fixture is one sandbox tenant with a funded USD internal account.
type fixture struct {
	db      *store.DB
	l       *ledger.Service
	t       store.Tenant
	account store.InternalAccount
	clock   *time.Time
}

const funded = 1_000_000

func newFixture(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	now := time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)
	f := &fixture{db: db, l: ledger.New(db), clock: &now}
	db.SetClock(func() time.Time { return *f.clock })
	t.Cleanup(func() { db.SetClock(time.Now) })
	p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: now}
	f.t = store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	accountID := id.New(id.InternalAccount)
	f.account = store.InternalAccount{ID: accountID, Tenant: f.t, Type: "INTERNAL_FIAT", Currency: "USD", Status: "ACTIVE",
		LedgerAccountID: accountID, FundingReference: "PSD" + accountID[len(accountID)-12:], Instructions: []byte("[]"),
		CreatedAt: now, UpdatedAt: now}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertPlatform(ctx, p); err != nil {
			return err
		}
		if _, err := tx.InsertInternalAccount(ctx, f.account); err != nil {
			return err
		}
		_, err := f.l.CreateAccountTx(ctx, tx, f.t, ledger.AccountSpec{ID: accountID, Currency: "USD", Kind: ledger.Internal})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	world := f.system(t, ledger.CodeWorld)
	if _, err := f.l.Transfer(ctx, f.t, []ledger.PostingSpec{{AccountID: world, Currency: "USD", Amount: -funded},
		{AccountID: accountID, Currency: "USD", Amount: funded}}, "seed"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) advance(d time.Duration) { *f.clock = f.clock.Add(d) }

func (f *fixture) system(t *testing.T, code string) string {
	t.Helper()
	a, err := f.l.SystemAccount(ctx, f.t, code, "USD")
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func (f *fixture) balance(t *testing.T, accountID string) ledger.Balance {
	t.Helper()
	b, err := f.l.Balance(ctx, f.t, accountID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const fee = 100

// payout does what the quote service does on execution: a HOLD (source −S,
// fees +F, clearing +R), the OUTGOING transaction in PROCESSING, and Submit,
// all in one database transaction. S = amount + fee, R = amount.
func (f *fixture) payout(t *testing.T, rail string, amount int64) string {
	t.Helper()
	txnID := id.New(id.Transaction)
	clearing, fees := f.system(t, ledger.CodeClearing), f.system(t, ledger.CodeServiceFees)
	err := f.db.InTx(ctx, func(tx *store.Tx) error {
		hold, err := f.l.Apply(ctx, tx, f.t, []ledger.TransferSpec{{Kind: ledger.KindHold, Reference: txnID,
			Postings: []ledger.PostingSpec{
				{AccountID: f.account.LedgerAccountID, Currency: "USD", Amount: -(amount + fee)},
				{AccountID: fees, Currency: "USD", Amount: fee},
				{AccountID: clearing, Currency: "USD", Amount: amount},
			}}})
		if err != nil {
			return err
		}
		received := amount
		if _, err := transactions.Record(ctx, tx, f.t, transactions.New{ID: txnID, Type: transactions.TypeOutgoing,
			Status: transactions.StatusProcessing, Direction: transactions.Debit, AccountID: f.account.ID,
			Source:      transactions.Source{SourceType: transactions.SideAccount, AccountID: f.account.ID, Currency: "USD"},
			Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: "ExternalAccount:x", Currency: "USD"},
			SentAmount:  amount + fee, SentCurrency: "USD", ReceivedAmount: &received, ReceivedCurrency: "USD", Fees: fee,
			HoldID: hold[0].ID, PaymentRail: rail}); err != nil {
			return err
		}
		return Submit(ctx, tx, Payout{Tenant: f.t, TransactionID: txnID, Rail: rail, HoldID: hold[0].ID,
			SourceAccountID: f.account.ID, ExternalAccountID: "ExternalAccount:x", SendingAmount: amount + fee,
			ReceivingAmount: amount, SendingCurrency: "USD", ReceivingCurrency: "USD",
			RemittanceInformation: "Invoice 42", StatementDescriptor: "PAYROLL"})
	})
	if err != nil {
		t.Fatal(err)
	}
	return txnID
}

func (f *fixture) get(t *testing.T, txnID string) transactions.Transaction {
	t.Helper()
	x, err := (&transactions.Service{DB: f.db}).Get(ctx, f.t, txnID)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func railDetails(t *testing.T, raw json.RawMessage) Details {
	t.Helper()
	var d Details
	if len(raw) == 0 {
		t.Fatal("no railDetails")
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// eventTypes lists the types of the events about a resource, in order.
func (f *fixture) eventTypes(t *testing.T, resourceID string) []string {
	t.Helper()
	evs, err := f.db.Read().EventsForCustomer(ctx, f.t, resourceID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func (f *fixture) audit(t *testing.T) {
	t.Helper()
	if err := f.l.Audit(ctx, f.t); err != nil {
		t.Fatalf("ledger audit: %v", err)
	}
}

// wantMoneyBack checks that nothing of a failed or returned payout stayed
// anywhere: source, clearing and fees as before it.
func (f *fixture) wantMoneyBack(t *testing.T, feesBefore int64) {
	t.Helper()
	if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded || b.Available != funded {
		t.Fatalf("source balance %+v, want %d back", b, funded)
	}
	if b := f.balance(t, f.system(t, ledger.CodeClearing)); b.Posted != 0 || b.Pending != 0 {
		t.Fatalf("clearing %+v, want 0", b)
	}
	if b := f.balance(t, f.system(t, ledger.CodeServiceFees)); b.Posted != feesBefore {
		t.Fatalf("fees %+v, want %d", b, feesBefore)
	}
	f.audit(t)
}

func withFactor(t *testing.T, factor float64) {
	old := ClockFactor()
	SetClockFactor(factor)
	t.Cleanup(func() { SetClockFactor(old) })
}
