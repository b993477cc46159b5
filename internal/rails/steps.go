package rails

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// applyPayoutStep applies one step of a payout inside tx: the ledger
// transfers and the transaction change. It updates st (railDetails, ledger
// transfer ids) for the job to store in the same transaction.
func applyPayoutStep(ctx context.Context, tx *store.Tx, l *ledger.Service, st *JobState, rail string, step Step) error {
	p := st.Payout
	t := p.Tenant
	now := tx.Now().UTC().Truncate(time.Microsecond)
	switch step.Action {
	case ActionSettle:
		clearing, err := l.SystemAccountTx(ctx, tx, t, ledger.CodeClearing, p.ReceivingCurrency)
		if err != nil {
			return err
		}
		world, err := l.SystemAccountTx(ctx, tx, t, ledger.CodeWorld, p.ReceivingCurrency)
		if err != nil {
			return err
		}
		out, err := l.Apply(ctx, tx, t, []ledger.TransferSpec{
			{Kind: ledger.KindPost, HoldID: p.HoldID, Reference: p.TransactionID},
			{Kind: ledger.KindTransfer, Reference: p.TransactionID, Postings: []ledger.PostingSpec{
				{AccountID: clearing.ID, Currency: p.ReceivingCurrency, Amount: -p.ReceivingAmount},
				{AccountID: world.ID, Currency: p.ReceivingCurrency, Amount: p.ReceivingAmount},
			}},
		})
		if err != nil {
			return err
		}
		st.PostID, st.SettlementID = out[0].ID, out[1].ID
		st.Details = Advance(st.Details, ActionSettle, now)
		_, err = transactions.Transition(ctx, tx, t, p.TransactionID, transactions.Change{
			Status: transactions.StatusCompleted, SettledAt: &now, PaymentRail: rail,
			DestinationRailDetails: detailsJSON(st.Details)})
		return err
	case ActionFail:
		if _, err := l.Apply(ctx, tx, t, []ledger.TransferSpec{
			{Kind: ledger.KindVoid, HoldID: p.HoldID, Reference: p.TransactionID}}); err != nil {
			return err
		}
		st.Details = Advance(st.Details, ActionFail, now)
		if err := failWithRefund(ctx, tx, t, p.TransactionID, step.FailureReason, step.FailureReason,
			transactions.Change{PaymentRail: rail, DestinationRailDetails: detailsJSON(st.Details)}, now); err != nil {
			return err
		}
		return releaseVolume(ctx, tx, p)
	case ActionReturn:
		if st.PostID == "" || st.SettlementID == "" {
			return fmt.Errorf("rails: payout %s has not settled: nothing to return", p.TransactionID)
		}
		// Undo the settlement (world → clearing), then the posted hold
		// (clearing → source, fees and FX legs back): the source gets back
		// everything it paid.
		// A sender deleted since gets its refund in suspense.
		out, err := l.Apply(ctx, tx, t, []ledger.TransferSpec{
			{Kind: ledger.KindReversal, ReversesID: st.SettlementID, Reference: p.TransactionID},
			{Kind: ledger.KindReversal, ReversesID: st.PostID, Reference: p.TransactionID, ToSuspense: true},
		})
		if err != nil {
			return err
		}
		if err := recordSuspense(ctx, tx, t, out, "refund of a returned payout", p.TransactionID); err != nil {
			return err
		}
		st.ReturnIDs = []string{out[0].ID, out[1].ID}
		st.Details = Advance(st.Details, ActionReturn, now)
		return failWithRefund(ctx, tx, t, p.TransactionID, ReasonPayoutReturned, ReasonPayoutReturned,
			transactions.Change{DestinationRailDetails: detailsJSON(st.Details)}, now)
	}
	return fmt.Errorf("rails: unknown step action %q", step.Action)
}

// advanceJob applies the job's next step in tx (when it is a PAYOUT with a
// step left, or an INCOMING deposit's pending refund) and writes the job's
// new state, releasing its lease. token "" skips the lease check
// (synchronous callers that locked the row).
func advanceJob(ctx context.Context, tx *store.Tx, l *ledger.Service, j store.RailJob, token string) error {
	var st JobState
	if err := json.Unmarshal(j.Data, &st); err != nil {
		return fmt.Errorf("rails: job %s: %w", j.ID, err)
	}
	if j.Kind == KindIncoming { // its only scheduled work is a refund
		if err := applyRefundStep(ctx, tx, l, &st); err != nil {
			return err
		}
		j.State = store.RailJobDone
		return saveJob(ctx, tx, j, st, token)
	}
	plan := PlanFor(st)
	if j.Step < len(plan.Steps) {
		if err := applyPayoutStep(ctx, tx, l, &st, plan.Rail, plan.Steps[j.Step]); err != nil {
			return err
		}
	}
	j.Step++
	j.State = store.RailJobDone
	if j.Step < len(plan.Steps) {
		j.State = store.RailJobPending
		j.DueAt = tx.Now().Add(Scale(plan.Steps[j.Step].After, ClockFactor()))
	}
	return saveJob(ctx, tx, j, st, token)
}

func saveJob(ctx context.Context, tx *store.Tx, j store.RailJob, st JobState, token string) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	j.Data = b
	return tx.UpdateRailJob(ctx, j, token)
}
