package rails

import (
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

func ptr[T any](v T) *T { return &v }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok || e.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

func (f *fixture) receive(t *testing.T, s *Service, amount int64) transactions.Transaction {
	t.Helper()
	x, err := s.Receive(ctx, f.t, IncomingRequest{AccountID: &f.account.ID, Amount: &amount})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestIncomingACHReturnDishonorContest: R-TXN-34, R-TXN-35, R-TXN-36,
// R-TXN-45 — an incoming ACH deposit COMPLETED, returned (FAILED,
// INCOMING_PAYMENT.FAILED, source railDetails RETURNED, money out), the
// return dishonored (COMPLETED, RETURN_DISHONORED, money back), then
// contested (RETURN_CONTESTED).
func TestIncomingACHReturnDishonorContest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		s := NewService(db)
		x := f.receive(t, s, 5_000)
		d := railDetails(t, x.Source.RailDetails)
		if x.Status != transactions.StatusCompleted || x.Type != transactions.TypeIncoming || d.Status != RailSettled ||
			len(d.TraceNumber) != 15 || x.Source.PaymentRail != ACH || x.Source.TraceNumber != d.TraceNumber {
			t.Fatalf("deposit %+v %+v", x, d)
		}
		if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded+5_000 {
			t.Fatalf("after deposit %+v", b)
		}
		_, err := s.Dishonor(ctx, f.t, x.ID)
		wantCode(t, err, "CONFLICT")
		_, err = s.Contest(ctx, f.t, x.ID)
		wantCode(t, err, "CONFLICT")

		r, err := s.Return(ctx, f.t, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		d = railDetails(t, r.Source.RailDetails)
		if r.Status != transactions.StatusFailed || d.Status != RailReturned || d.ReturnedAt == nil {
			t.Fatalf("returned %+v %+v", r, d)
		}
		if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded {
			t.Fatalf("after return %+v", b)
		}
		_, err = s.Return(ctx, f.t, x.ID) // returned once only
		wantCode(t, err, "CONFLICT")

		r, err = s.Dishonor(ctx, f.t, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		d = railDetails(t, r.Source.RailDetails)
		if r.Status != transactions.StatusCompleted || d.Status != RailReturnDishonored || d.DishonoredAt == nil {
			t.Fatalf("dishonored %+v %+v", r, d)
		}
		if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded+5_000 {
			t.Fatalf("after dishonor %+v", b)
		}
		r, err = s.Contest(ctx, f.t, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		d = railDetails(t, r.Source.RailDetails)
		if r.Status != transactions.StatusCompleted || d.Status != RailReturnContested || d.ContestedAt == nil {
			t.Fatalf("contested %+v %+v", r, d)
		}
		want := []string{"INCOMING_PAYMENT.COMPLETED", "INCOMING_PAYMENT.FAILED", "INCOMING_PAYMENT.COMPLETED"}
		if evs := f.eventTypes(t, x.ID); !slices.Equal(evs, want) {
			t.Fatalf("events %v", evs)
		}
		f.audit(t)
	})
}

// TestIncomingReturnAfterFundsUsed: R-TXN-34 — the deposit stays COMPLETED
// when the funds were already used; the rail still reports RETURNED.
func TestIncomingReturnAfterFundsUsed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		s := NewService(db)
		x := f.receive(t, s, 7_000)
		world := f.system(t, ledger.CodeWorld)
		if _, err := f.l.Transfer(ctx, f.t, []ledger.PostingSpec{{AccountID: f.account.LedgerAccountID, Currency: "USD",
			Amount: -(funded + 7_000)}, {AccountID: world, Currency: "USD", Amount: funded + 7_000}}, "spent"); err != nil {
			t.Fatal(err)
		}
		r, err := s.Return(ctx, f.t, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := railDetails(t, r.Source.RailDetails); r.Status != transactions.StatusCompleted || d.Status != RailReturned {
			t.Fatalf("%+v %+v", r, d)
		}
		if evs := f.eventTypes(t, x.ID); !slices.Equal(evs, []string{"INCOMING_PAYMENT.COMPLETED"}) {
			t.Fatalf("events %v", evs)
		}
		f.audit(t)
	})
}

// TestApproveReject: R-TXN-05 — an incoming payment of an amount ending in
// 907 waits for the platform; approve credits it, reject fails it; anything
// else is 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL.
func TestApproveReject(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		s := NewService(db)
		a := f.receive(t, s, 10_907)
		if a.Status != transactions.StatusPending {
			t.Fatalf("%+v", a)
		}
		if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded {
			t.Fatalf("money moved before approval: %+v", b)
		}
		x, err := s.Approve(ctx, f.t, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if x.Status != transactions.StatusCompleted || x.SettledAt == nil {
			t.Fatalf("%+v", x)
		}
		if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded+10_907 {
			t.Fatalf("after approval %+v", b)
		}
		_, err = s.Approve(ctx, f.t, a.ID)
		wantCode(t, err, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		_, err = s.Reject(ctx, f.t, a.ID, "")
		wantCode(t, err, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")

		r := f.receive(t, s, 2_907)
		x, err = s.Reject(ctx, f.t, r.ID, "RESTRICTED_JURISDICTION")
		if err != nil || x.Status != transactions.StatusFailed {
			t.Fatalf("%+v %v", x, err)
		}
		_, err = s.Approve(ctx, f.t, r.ID)
		wantCode(t, err, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		// A completed deposit and an outgoing payout: 409; unknown: 404.
		_, err = s.Approve(ctx, f.t, f.receive(t, s, 1_000).ID)
		wantCode(t, err, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		withFactor(t, 0)
		_, err = s.Approve(ctx, f.t, f.payout(t, RTP, 1_000))
		wantCode(t, err, "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL")
		_, err = s.Approve(ctx, f.t, "Transaction:00000000-0000-7000-8000-000000000000")
		wantCode(t, err, "TRANSACTION_NOT_FOUND")
		if evs := f.eventTypes(t, a.ID); !slices.Equal(evs, []string{"INCOMING_PAYMENT.PENDING", "INCOMING_PAYMENT.COMPLETED"}) {
			t.Fatalf("events %v", evs)
		}
		f.audit(t)
	})
}

// TestCancel: R-QUOTE-34 — a pending ACH or wire payout can be cancelled
// (FAILED, refunded, money back); settled payouts, instant rails and
// non-payouts get 409 TRANSACTION_NOT_CANCELLABLE.
func TestCancel(t *testing.T) {
	withFactor(t, 1) // nothing settles while we cancel
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		s := NewService(db)
		for _, rail := range []string{ACH, Wire} {
			txn := f.payout(t, rail, 8_000)
			x, err := s.Cancel(ctx, f.t, txn)
			if err != nil {
				t.Fatal(err)
			}
			if x.Status != transactions.StatusFailed || x.Refund == nil || x.Refund.Status != transactions.RefundCompleted {
				t.Fatalf("%+v", x)
			}
			_, err = s.Cancel(ctx, f.t, txn)
			wantCode(t, err, "TRANSACTION_NOT_CANCELLABLE")
			f.wantMoneyBack(t, 0)
		}
		// The cancelled job never runs.
		f.advance(100 * 24 * 3600e9)
		drain(t, db)
		f.wantMoneyBack(t, 0)

		rtp := f.payout(t, RTP, 1_000)
		_, err := s.Cancel(ctx, f.t, rtp)
		wantCode(t, err, "TRANSACTION_NOT_CANCELLABLE")
		ach := f.payout(t, ACH, 1_000)
		f.advance(100 * 24 * 3600e9)
		drain(t, db)
		_, err = s.Cancel(ctx, f.t, ach) // settled
		wantCode(t, err, "TRANSACTION_NOT_CANCELLABLE")
		_, err = s.Cancel(ctx, f.t, f.receive(t, s, 1_000).ID)
		wantCode(t, err, "TRANSACTION_NOT_CANCELLABLE")
		f.audit(t)
	})
}

// TestSandboxReturnOfPayout: R-TXN-33 — the sandbox return endpoint also
// returns a completed ACH payout; an RTP payout cannot be returned.
func TestSandboxReturnOfPayout(t *testing.T) {
	withFactor(t, 0)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		s := NewService(db)
		txn := f.payout(t, ACH, 9_000)
		drain(t, db)
		x, err := s.Return(ctx, f.t, txn)
		if err != nil {
			t.Fatal(err)
		}
		if x.Status != transactions.StatusFailed || x.FailureReason != ReasonPayoutReturned {
			t.Fatalf("%+v", x)
		}
		f.wantMoneyBack(t, 0)
		rtp := f.payout(t, RTP, 1_000)
		drain(t, db)
		_, err = s.Return(ctx, f.t, rtp)
		wantCode(t, err, "CONFLICT")
		_ = ptr(1)
	})
}
