package quotes

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// A payment-instruction-funded quote (REALTIME_FUNDING): it carries the
// funding account's instructions, cannot be executed or executed at once,
// and proceeds when its funds arrive: ExecuteFunded, in the transaction
// that credits the funding account, moves the money and completes it.
// After expiry the funds no longer execute it.
func TestExecuteFunded(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a, b := f.customer(true), f.customer(true)
		funding, dst := f.account(a, "USD"), f.account(b, "USD")
		r := Request{Source: &SourceIn{SourceType: ptr(SourceRealtimeFunding), CustomerID: ptr(a), Currency: ptr("USD")},
			Destination:        &DestinationIn{DestinationType: ptr(DestAccount), AccountID: ptr(dst.ID)},
			LockedCurrencySide: ptr("SENDING"), LockedCurrencyAmount: ptr(int64(2_500))}
		q, err := f.svc.Create(f.ctx, f.tn, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.PaymentInstructions) == 0 || q.Source.SourceType != SourceRealtimeFunding {
			t.Fatalf("%+v", q)
		}
		if _, err := f.svc.Execute(f.ctx, f.tn, q.ID); code(err) != "INVALID_INPUT" {
			t.Fatalf("execute: %v", err)
		}
		acct, amount, cur, err := f.svc.FundingAccount(f.ctx, f.db.Read(), f.tn, q.ID)
		if err != nil || acct != funding.ID || amount != q.TotalSendingAmount || cur != "USD" {
			t.Fatalf("FundingAccount %s %d %s %v", acct, amount, cur, err)
		}
		arrive := func(quoteID string) error {
			return f.db.InTx(f.ctx, func(tx *store.Tx) error {
				world, err := f.led.SystemAccountTx(f.ctx, tx, f.tn, ledger.CodeWorld, "USD")
				if err != nil {
					return err
				}
				if _, err := f.led.Apply(f.ctx, tx, f.tn, []ledger.TransferSpec{{Postings: []ledger.PostingSpec{
					{AccountID: world.ID, Currency: "USD", Amount: -amount},
					{AccountID: funding.LedgerAccountID, Currency: "USD", Amount: amount}}}}); err != nil {
					return err
				}
				_, err = f.svc.ExecuteFunded(f.ctx, tx, f.tn, quoteID)
				return err
			})
		}
		if err := arrive(q.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.svc.Get(f.ctx, f.tn, q.ID); got.Status != StatusCompleted {
			t.Fatalf("funded quote %s", got.Status)
		}
		if f.balance(funding).Posted != 0 || f.balance(dst).Posted != q.TotalReceivingAmount {
			t.Fatal("the funds did not move on")
		}
		// A second arrival for the same quote is refused and rolls back.
		if err := arrive(q.ID); code(err) != "CONFLICT" {
			t.Fatalf("second arrival: %v", err)
		}
		if f.balance(funding).Posted != 0 {
			t.Fatal("a refused arrival kept the money")
		}
		// Expired: refused, nothing kept.
		q2, err := f.svc.Create(f.ctx, f.tn, r)
		if err != nil {
			t.Fatal(err)
		}
		f.advance(DefaultExpiry)
		if err := arrive(q2.ID); code(err) != "QUOTE_EXPIRED" {
			t.Fatalf("expired arrival: %v", err)
		}
		if f.balance(funding).Posted != 0 {
			t.Fatal("an expired arrival kept the money")
		}
		f.audit()
	})
}

// CreateTransfer (transfer-in): a pull from a customer's US bank account
// into an internal account is executed at once and answers the INCOMING
// transaction, COMPLETED, with the money posted from the outside world.
func TestCreateTransfer_Pull(t *testing.T) {
	eachFx(t, func(t *testing.T, f *fx) {
		a := f.customer(true)
		dst := f.account(a, "USD")
		ext := f.external(a, "1234561234")
		x, err := f.svc.CreateTransfer(f.ctx, f.tn, req(ext, dst.ID, "SENDING", 7_000))
		if err != nil {
			t.Fatal(err)
		}
		if x.Type != transactions.TypeIncoming || x.Status != transactions.StatusCompleted || x.QuoteID == "" {
			t.Fatalf("%+v", x)
		}
		if got := f.balance(dst).Posted; got != x.ReceivedAmount.Amount || got == 0 {
			t.Fatalf("balance %d, received %d", got, x.ReceivedAmount.Amount)
		}
		// A pull must land in an internal account.
		before := f.state()
		if _, err := f.svc.CreateTransfer(f.ctx, f.tn, req(ext, f.external(a, "1234561235"), "SENDING", 7_000)); code(err) != "INVALID_INPUT" {
			t.Fatalf("pull to an external account: %v", err)
		}
		if f.state() != before {
			t.Fatal("a refused pull changed something")
		}
		f.audit()
	})
}
