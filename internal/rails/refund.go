package rails

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Refund reasons: the values the refund object's `reason` takes for an
// incoming payment sent back to its sender.
const (
	RefundTransactionFailed = "TRANSACTION_FAILED"
	RefundUserCancellation  = "USER_CANCELLATION"
	RefundTimeout           = "TIMEOUT"
)

// RefundReasons are the accepted refund reasons.
var RefundReasons = []string{RefundTransactionFailed, RefundUserCancellation, RefundTimeout}

// IncomingRefund is the refund of an incoming payment as its rail job
// remembers it (JobState.Refund). Only the whole payment is refunded: the
// spec's refund object carries no amount, so a partial refund could not be
// reported.
type IncomingRefund struct {
	HoldID      string    `json:"holdId"`
	Status      string    `json:"status"` // a transactions.Refund* status
	Reason      string    `json:"reason"`
	InitiatedAt time.Time `json:"initiatedAt"`
}

// RefundMove is one row of the incoming refund's transition table.
type RefundMove struct{ From, To string }

// RefundMoves is the table of an incoming refund's status ("" = none yet):
//
//	"" → PENDING          refund requested: the amount is held on the account
//	PENDING → COMPLETED   the rail delivered the money back to the sender (hold posted)
//	PENDING → FAILED      the rail failed: the hold is voided, the money stays with the customer
//	FAILED → PENDING      a new refund after a failed one
//
// Each status is reported by INCOMING_PAYMENT.REFUND_<STATUS> (R-TXN-46).
var RefundMoves = []RefundMove{
	{"", transactions.RefundPending},
	{transactions.RefundPending, transactions.RefundCompleted},
	{transactions.RefundPending, transactions.RefundFailed},
	{transactions.RefundFailed, transactions.RefundPending},
}

// RefundAllowed reports whether an incoming refund may move from one status
// to another.
func RefundAllowed(from, to string) bool { return slices.Contains(RefundMoves, RefundMove{from, to}) }

func notRefundable(transactionID, why string) error {
	return apierr.Conflict(fmt.Sprintf("Transaction %s cannot be refunded: %s", transactionID, why))
}

// RefundIncoming sends a completed incoming payment back to its sender
// (sandbox; the rails that received it carry it back). In one database
// transaction it holds the whole amount on the receiving account (400
// INSUFFICIENT_FUNDS when the customer has already used it), sets the
// transaction's refund object to PENDING (INCOMING_PAYMENT.REFUND_PENDING)
// and schedules the transaction's rail job. The runner later posts the hold
// to the outside world (REFUND_COMPLETED with settledAt) or, when the rail
// fails, voids it (REFUND_FAILED: the money is the customer's again). The
// transaction's status stays what it was: the spec reports a refund on the
// refund object only. reason is one of RefundReasons.
func (s *Service) RefundIncoming(ctx context.Context, t store.Tenant, transactionID, reason string) (transactions.Transaction, error) {
	if !slices.Contains(RefundReasons, reason) {
		var f apierr.Fields
		f.Add("reason", apierr.Enum, "must be one of %v", RefundReasons)
		return transactions.Transaction{}, f.Err()
	}
	notJob := notRefundable(transactionID, "it is not an incoming payment received on the sandbox rails")
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if err := refundable(j, st, row); err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		holdID, err := s.holdRefund(ctx, tx, t, st, transactionID)
		if err != nil {
			return err
		}
		st.Refund = &IncomingRefund{HoldID: holdID, Status: transactions.RefundPending, Reason: reason, InitiatedAt: now}
		if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
			Refund: refundObject(transactionID, st.Refund, nil)}); err != nil {
			return err
		}
		j.State, j.DueAt = store.RailJobPending, now.Add(Scale(For(j.Rail).Typical(""), ClockFactor()))
		return saveJob(ctx, tx, j, *st, "")
	})
}

// refundable checks that a transaction may be refunded now.
func refundable(j store.RailJob, st *JobState, row store.Transaction) error {
	switch {
	case j.Kind != KindIncoming:
		return notRefundable(row.ID, "only incoming payments are refunded this way (an outgoing payment is refunded when it fails)")
	case row.Status != transactions.StatusCompleted || st.DepositTransferID == "":
		return notRefundable(row.ID, "it is "+row.Status+", not a COMPLETED incoming payment whose money arrived")
	case st.Refund != nil && !RefundAllowed(st.Refund.Status, transactions.RefundPending):
		return notRefundable(row.ID, "its refund is already "+st.Refund.Status+" (a refund returns the whole payment, once)")
	}
	return nil
}

// holdRefund reserves the payment's amount on the receiving account for the
// refund: account −amount, clearing +amount, pending until the rail settles.
func (s *Service) holdRefund(ctx context.Context, tx *store.Tx, t store.Tenant, st *JobState, transactionID string) (string, error) {
	clearing, err := s.Ledger.SystemAccountTx(ctx, tx, t, ledger.CodeClearing, st.Currency)
	if err != nil {
		return "", err
	}
	out, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{{Kind: ledger.KindHold, Reference: transactionID,
		Postings: []ledger.PostingSpec{
			{AccountID: st.AccountID, Currency: st.Currency, Amount: -st.Amount},
			{AccountID: clearing.ID, Currency: st.Currency, Amount: st.Amount},
		}}})
	var insufficient *ledger.InsufficientFundsError
	switch {
	case errors.As(err, &insufficient):
		return "", apierr.Newf("INSUFFICIENT_FUNDS",
			"Account %s has %d available and the refund of transaction %s needs %d: the payment was already used",
			insufficient.AccountID, insufficient.Available, transactionID, insufficient.Debit).
			WithDetails(map[string]any{"accountId": insufficient.AccountID})
	case err != nil:
		return "", accounts.ClosedError(err)
	}
	return out[0].ID, nil
}

// refundObject is the transaction's refund object for r.
func refundObject(transactionID string, r *IncomingRefund, settledAt *time.Time) *transactions.Refund {
	return &transactions.Refund{Reference: "Refund-" + transactionID, InitiatedAt: r.InitiatedAt,
		Status: r.Status, SettledAt: settledAt, Reason: r.Reason}
}

// refundFails reports whether the rail fails to carry a refund back: in the
// sandbox, a payment whose amount ends in a failing magic value (901–905,
// as for payouts); production has no rail partner configured, so its
// refunds fail rather than pretend to move money.
func refundFails(st JobState) bool {
	if env := st.Payout.Tenant.Env; env != "" && env != "sandbox" {
		return true
	}
	o := Outcome(st.Amount)
	return o != "" && o != ReasonPayoutReturned
}

// applyRefundStep settles or fails a pending incoming refund inside tx.
func applyRefundStep(ctx context.Context, tx *store.Tx, l *ledger.Service, st *JobState) error {
	r, p := st.Refund, st.Payout
	if r == nil || r.Status != transactions.RefundPending {
		return nil // nothing in flight (a job rescheduled by hand)
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	to, settled := transactions.RefundCompleted, &now
	if refundFails(*st) {
		to, settled = transactions.RefundFailed, nil
		if _, err := l.Apply(ctx, tx, p.Tenant, []ledger.TransferSpec{
			{Kind: ledger.KindVoid, HoldID: r.HoldID, Reference: p.TransactionID}}); err != nil {
			return err
		}
	} else if err := postRefund(ctx, tx, l, st); err != nil {
		return err
	}
	if !RefundAllowed(r.Status, to) {
		return fmt.Errorf("rails: refund of %s from %s to %s", p.TransactionID, r.Status, to)
	}
	r.Status = to
	_, err := transactions.Transition(ctx, tx, p.Tenant, p.TransactionID, transactions.Change{
		Refund: refundObject(p.TransactionID, r, settled)})
	return err
}

// postRefund completes the refund's hold and pays the money out of
// clearing to the outside world (the sender's bank).
func postRefund(ctx context.Context, tx *store.Tx, l *ledger.Service, st *JobState) error {
	t, cur := st.Payout.Tenant, st.Currency
	clearing, err := l.SystemAccountTx(ctx, tx, t, ledger.CodeClearing, cur)
	if err != nil {
		return err
	}
	world, err := l.SystemAccountTx(ctx, tx, t, ledger.CodeWorld, cur)
	if err != nil {
		return err
	}
	_, err = l.Apply(ctx, tx, t, []ledger.TransferSpec{
		{Kind: ledger.KindPost, HoldID: st.Refund.HoldID, Reference: st.Payout.TransactionID},
		{Kind: ledger.KindTransfer, Reference: st.Payout.TransactionID, Postings: []ledger.PostingSpec{
			{AccountID: clearing.ID, Currency: cur, Amount: -st.Amount},
			{AccountID: world.ID, Currency: cur, Amount: st.Amount},
		}},
	})
	return err
}
