package rails

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// detailsJSON is railDetails as Change wants it (nil leaves it unchanged).
func detailsJSON(d *Details) json.RawMessage {
	if d == nil {
		return nil
	}
	b, _ := json.Marshal(d)
	return b
}

// failWithRefund moves a transaction to FAILED with its failureReason and a
// refund that settled at once (the hold was voided or the settlement
// reversed in the same database transaction): events <TYPE>_PAYMENT.FAILED,
// then REFUND_PENDING and REFUND_COMPLETED (R-TXN-44), in that order.
func failWithRefund(ctx context.Context, tx *store.Tx, t store.Tenant, transactionID, reason, refundReason string,
	ch transactions.Change, now time.Time) error {
	ch.Status, ch.FailureReason = transactions.StatusFailed, reason
	ch.Refund = &transactions.Refund{Reference: "Refund-" + transactionID, InitiatedAt: now,
		Status: transactions.RefundPending, Reason: refundReason}
	if _, err := transactions.Transition(ctx, tx, t, transactionID, ch); err != nil {
		return err
	}
	done := *ch.Refund
	done.Status, done.SettledAt = transactions.RefundCompleted, &now
	_, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{Refund: &done})
	return err
}

// releaseVolume gives a payout that failed or was cancelled before it left
// back its share of the daily volume limit (R-ERR-21): the limit bounds the
// money that leaves each day, and this never left; the source got it all
// back. A payout returned after it settled did leave, and keeps counting,
// as the spec's daily card limits keep counting refunds and reversals
// (Part B, PATCH /cards). Call it last in the transaction (it locks the
// day's volume rows, store/volumes.go).
func releaseVolume(ctx context.Context, tx *store.Tx, p Payout) error {
	if p.QuoteID == "" {
		return nil
	}
	q, err := tx.GetQuote(ctx, p.Tenant, p.QuoteID, false)
	if err != nil {
		return err
	}
	if q.ExecutedAt == nil {
		return nil
	}
	return tx.ReleaseDailyVolume(ctx, p.Tenant, *q.ExecutedAt, q.USDEquivalent)
}
