package rails

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

func drain(t *testing.T, db *store.DB) {
	t.Helper()
	if err := NewRunner(db, Options{}).Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerCompletes: R-QUOTE-32, R-TXN-11, R-TXN-21, R-TXN-43 — the rail
// completes: hold posted, clearing to world, COMPLETED with settledAt,
// paymentRail and railDetails SETTLED, one OUTGOING_PAYMENT.COMPLETED.
func TestRunnerCompletes(t *testing.T) {
	withFactor(t, 0)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		for _, rail := range []string{ACH, ACHSameDay, Wire, RTP, FedNow, SEPA, SEPAInstant, Onchain, Lightning, Spark, "", SWIFT} {
			txn := f.payout(t, rail, 10_000)
			during := f.get(t, txn)
			if during.Status != transactions.StatusProcessing {
				t.Fatalf("%s: %s before the rail ran", rail, during.Status)
			}
			drain(t, db)
			x := f.get(t, txn)
			if x.Status != transactions.StatusCompleted || x.SettledAt == nil || x.FailureReason != "" {
				t.Fatalf("%s: %+v", rail, x)
			}
			want := rail
			if rail == "" {
				want = Internal
			}
			if string(x.PaymentRail) != `"`+want+`"` {
				t.Fatalf("%s: paymentRail %s", rail, x.PaymentRail)
			}
			if d := For(rail).Details(JobState{}); d != nil {
				got := railDetails(t, x.Destination.RailDetails)
				if got.PaymentRail != want || (rail != Onchain && got.Status != RailSettled) {
					t.Fatalf("%s: railDetails %+v", rail, got)
				}
			} else if len(x.Destination.RailDetails) != 0 {
				t.Fatalf("%s: railDetails %s on a rail without a variant (R-TXN-19)", rail, x.Destination.RailDetails)
			}
			if evs := f.eventTypes(t, txn); !slices.Equal(evs, []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"}) {
				t.Fatalf("%s: events %v", rail, evs)
			}
		}
		n := int64(12)
		if b := f.balance(t, f.account.LedgerAccountID); b.Posted != funded-n*10_100 || b.Pending != 0 {
			t.Fatalf("source %+v", b)
		}
		if b := f.balance(t, f.system(t, ledger.CodeClearing)); b.Posted != 0 || b.Pending != 0 {
			t.Fatalf("clearing %+v", b)
		}
		if b := f.balance(t, f.system(t, ledger.CodeServiceFees)); b.Posted != n*fee {
			t.Fatalf("fees %+v", b)
		}
		if b := f.balance(t, f.system(t, ledger.CodeWorld)); b.Posted != -funded+n*10_000 {
			t.Fatalf("world %+v", b)
		}
		f.audit(t)
	})
}

// TestRunnerFailuresRefund: R-TXN-27, R-TXN-29, R-TXN-31, R-TXN-44 — each
// magic failure: FAILED with its failureReason, a COMPLETED refund, the
// money back, and OUTGOING_PAYMENT.FAILED then the refund events.
func TestRunnerFailuresRefund(t *testing.T) {
	withFactor(t, 0)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		for suffix, reason := range map[int64]string{901: ReasonQuoteExecutionFailed, 902: ReasonLimitExceeded,
			903: ReasonAccountCannotReceive, 904: ReasonAccountInvalid, 905: ReasonComplianceRejected} {
			for _, rail := range []string{ACH, RTP, Onchain} {
				txn := f.payout(t, rail, 20_000+suffix-fee)
				drain(t, db)
				x := f.get(t, txn)
				if x.Status != transactions.StatusFailed || x.FailureReason != reason || x.SettledAt != nil {
					t.Fatalf("%s %d: %+v", rail, suffix, x)
				}
				if x.Refund == nil || x.Refund.Status != transactions.RefundCompleted || x.Refund.SettledAt == nil ||
					x.Refund.Reference == "" || x.Refund.Reason != reason {
					t.Fatalf("%s %d: refund %+v", rail, suffix, x.Refund)
				}
				if rail != Onchain {
					if d := railDetails(t, x.Destination.RailDetails); d.Status != RailFailed {
						t.Fatalf("%s: railDetails %+v", rail, d)
					}
				}
				want := []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.FAILED",
					"OUTGOING_PAYMENT.REFUND_PENDING", "OUTGOING_PAYMENT.REFUND_COMPLETED"}
				if evs := f.eventTypes(t, txn); !slices.Equal(evs, want) {
					t.Fatalf("%s %d: events %v", rail, suffix, evs)
				}
				f.wantMoneyBack(t, 0)
			}
		}
	})
}

// TestRunnerACHReturned: R-TXN-33, R-TXN-36 — an ACH payout completes, then
// is returned: FAILED with PAYOUT_RETURNED, railDetails RETURNED with
// returnedAt, refunded, money (fees included) back at the source.
func TestRunnerACHReturned(t *testing.T) {
	withFactor(t, 0)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		for _, rail := range []string{ACH, ACHSameDay} {
			txn := f.payout(t, rail, 30_906-fee)
			drain(t, db)
			x := f.get(t, txn)
			d := railDetails(t, x.Destination.RailDetails)
			if x.Status != transactions.StatusFailed || x.FailureReason != ReasonPayoutReturned || d.Status != RailReturned ||
				d.ReturnedAt == nil || x.Refund == nil || x.Refund.Status != transactions.RefundCompleted {
				t.Fatalf("%s: %+v %+v", rail, x, d)
			}
			want := []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED", "OUTGOING_PAYMENT.FAILED",
				"OUTGOING_PAYMENT.REFUND_PENDING", "OUTGOING_PAYMENT.REFUND_COMPLETED"}
			if evs := f.eventTypes(t, txn); !slices.Equal(evs, want) {
				t.Fatalf("events %v", evs)
			}
			f.wantMoneyBack(t, 0)
			if b := f.balance(t, f.system(t, ledger.CodeWorld)); b.Posted != -funded {
				t.Fatalf("world %+v", b)
			}
		}
	})
}

// TestRunnerTiming: the typical rail time, scaled by the clock factor,
// against the store clock. Factor 1: ACH is due after two days, not before;
// the return two days after that.
func TestRunnerTiming(t *testing.T) {
	withFactor(t, 1)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ach := f.payout(t, ACH, 40_906-fee)
		rtp := f.payout(t, RTP, 1_000)
		f.advance(4 * time.Second)
		drain(t, db)
		if s := f.get(t, rtp).Status; s != transactions.StatusProcessing {
			t.Fatalf("RTP after 4s: %s", s)
		}
		f.advance(time.Second)
		drain(t, db)
		if s := f.get(t, rtp).Status; s != transactions.StatusCompleted {
			t.Fatalf("RTP after 5s: %s", s)
		}
		f.advance(48*time.Hour - 6*time.Second)
		drain(t, db)
		if s := f.get(t, ach).Status; s != transactions.StatusProcessing {
			t.Fatalf("ACH before two days: %s", s)
		}
		f.advance(time.Second)
		drain(t, db)
		if s := f.get(t, ach).Status; s != transactions.StatusCompleted {
			t.Fatalf("ACH after two days: %s", s)
		}
		f.advance(48*time.Hour - time.Second)
		drain(t, db)
		if s := f.get(t, ach).Status; s != transactions.StatusCompleted {
			t.Fatalf("ACH return came early: %s", s)
		}
		f.advance(time.Second)
		drain(t, db)
		if x := f.get(t, ach); x.Status != transactions.StatusFailed || x.FailureReason != ReasonPayoutReturned {
			t.Fatalf("ACH after the return window: %+v", x)
		}
	})
}

// TestRunnerCrashAnywhere: a worker killed after claiming a step, or in the
// middle of its database transaction, applies nothing; once its lease
// expires another worker applies the step exactly once. Checked at every
// step of a payout that settles and is then returned.
func TestRunnerCrashAnywhere(t *testing.T) {
	withFactor(t, 0)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		txn := f.payout(t, ACH, 50_906-fee)
		lease := 30 * time.Second
		wantEvents := [][]string{
			{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"},
			{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED", "OUTGOING_PAYMENT.FAILED",
				"OUTGOING_PAYMENT.REFUND_PENDING", "OUTGOING_PAYMENT.REFUND_COMPLETED"},
		}
		for step := range 2 {
			for _, where := range []string{"after claim", "inside the transaction"} {
				before, _ := db.Read().CountLedgerRows(ctx, f.t)
				evsBefore := f.eventTypes(t, txn)
				cctx, crash := context.WithCancel(ctx)
				r := NewRunner(db, Options{Lease: lease})
				if where == "after claim" {
					r.before = func(context.Context, store.RailJob) { crash() }
				} else {
					r.inTx = func(context.Context, store.RailJob) { crash() }
				}
				if _, err := r.RunDue(cctx); err != nil {
					t.Fatal(err)
				}
				crash()
				after, _ := db.Read().CountLedgerRows(ctx, f.t)
				if after != before || !slices.Equal(f.eventTypes(t, txn), evsBefore) {
					t.Fatalf("step %d, crash %s: something was applied: %+v → %+v", step, where, before, after)
				}
				// The lease still holds the job: nobody else takes it.
				if n, _ := NewRunner(db, Options{}).RunDue(ctx); n != 0 {
					t.Fatalf("step %d: a leased job was claimed again", step)
				}
				f.advance(lease + time.Second)
			}
			// The restarted node polls until it gets the job: database/sql rolls a
			// cancelled transaction back asynchronously, so on PostgreSQL the
			// crashed worker's row lock can outlive the cancel for a moment and
			// SKIP LOCKED passes the row over. The events and ledger checks below
			// prove the step was applied exactly once.
			ran := 0
			for range 1000 { // up to about 10 s: a loaded machine under -race is slow to roll back
				n, err := NewRunner(db, Options{}).RunDue(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if ran += n; ran > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if ran != 1 {
				t.Fatalf("step %d: restarted node ran %d jobs", step, ran)
			}
			if evs := f.eventTypes(t, txn); !slices.Equal(evs, wantEvents[step]) {
				t.Fatalf("after step %d: events %v", step, evs)
			}
			f.audit(t)
		}
		drain(t, db)
		f.wantMoneyBack(t, 0)
		j, err := db.Read().RailJobByTransaction(ctx, f.t, txn, false)
		if err != nil || j.State != store.RailJobDone || j.Step != 2 {
			t.Fatalf("job %+v %v", j, err)
		}
	})
}

// TestRunnerTwoWorkersNeverShareAJob: two runners draining the same jobs
// at once each claim a different job-step; every payout completes once.
func TestRunnerTwoWorkersNeverShareAJob(t *testing.T) {
	withFactor(t, 0)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		var txns []string
		for i := range 24 {
			txns = append(txns, f.payout(t, RTP, int64(1_000+i)))
		}
		var mu sync.Mutex
		claims := map[string]int{}
		var wg sync.WaitGroup
		for range 2 {
			r := NewRunner(db, Options{Workers: 3})
			r.before = func(_ context.Context, j store.RailJob) {
				mu.Lock()
				claims[fmt.Sprintf("%s/%d", j.ID, j.Step)]++
				mu.Unlock()
			}
			wg.Go(func() {
				if err := r.Drain(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		drain(t, db)
		for k, n := range claims {
			if n != 1 {
				t.Fatalf("job-step %s claimed %d times", k, n)
			}
		}
		if len(claims) != len(txns) {
			t.Fatalf("%d claims for %d jobs", len(claims), len(txns))
		}
		for _, txn := range txns {
			if evs := f.eventTypes(t, txn); !slices.Equal(evs, []string{"OUTGOING_PAYMENT.PROCESSING", "OUTGOING_PAYMENT.COMPLETED"}) {
				t.Fatalf("%s: %v", txn, evs)
			}
		}
		f.audit(t)
	})
}

// TestRunnerProductionHasNoPartner: a production payout is not pretended:
// it fails with QUOTE_EXECUTION_FAILED and is refunded.
func TestRunnerProductionHasNoPartner(t *testing.T) {
	st := payoutState(ACH, 10_000)
	st.Payout.Tenant.Env = store.EnvProduction
	if p := PlanFor(st); p.Steps[0].Action != ActionFail {
		t.Fatalf("%+v", p)
	}
}
