package transactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/store"
)

// ErrRefusedTransition is returned (wrapped) by Transition for a move its
// type's table does not allow.
var ErrRefusedTransition = errors.New("transactions: transition not allowed")

// Change is what Transition does to a transaction. Zero fields leave the
// transaction as it is.
type Change struct {
	Status        string // target status ("" = unchanged)
	FailureReason string
	SettledAt     *time.Time
	PaymentRail   string
	// SourceRailDetails and DestinationRailDetails replace the sides'
	// railDetails (nil = unchanged).
	SourceRailDetails, DestinationRailDetails json.RawMessage
	// Refund replaces the refund object (nil = unchanged); a new refund
	// status emits <TYPE>_PAYMENT.REFUND_<STATUS>.
	Refund *Refund
	// PendingReason sets why a PENDING transaction is held (R-TXN-30); a
	// move out of PENDING clears it.
	PendingReason string
	// LedgerTransferID and HoldID record the ledger transfer that moved the
	// money and the hold that reserves it ("" = unchanged).
	LedgerTransferID, HoldID string
	// PaymentInstructions replaces the payment instructions (nil =
	// unchanged): an SCA quote's are withheld until it is authorized.
	PaymentInstructions json.RawMessage
}

// Move is one row of a transition table.
type Move struct{ From, To string }

// OutgoingMoves is the outgoing transaction's table: Part A "Quote and
// outgoing transaction", as the transaction lives it.
//
//	PENDING → PROCESSING              execute, or funds arrive at the quote's payment instructions
//	PENDING → PENDING_AUTHORIZATION   execute of an SCA customer
//	PENDING → EXPIRED                 expiresAt passes (terminal)
//	PENDING_AUTHORIZATION → PROCESSING  authorization completes
//	PENDING_AUTHORIZATION → PENDING   a realtime-funding quote is authorized: it waits for its funds
//	PENDING_AUTHORIZATION → FAILED    authorization never completed (SCA_NOT_COMPLETED; no money moved)
//	PENDING_AUTHORIZATION → EXPIRED   the quote expires unauthorized
//	PROCESSING → COMPLETED            rail completes (settledAt)
//	PROCESSING → FAILED               failure (failureReason; refund)
//	COMPLETED → FAILED                payout returned (PAYOUT_RETURNED; refund)
//	FAILED → COMPLETED                a return dishonored
//	FAILED → REFUNDED                 deprecated status, still possible (R-TXN-32)
var OutgoingMoves = []Move{
	{StatusPending, StatusProcessing},
	{StatusPending, StatusPendingAuthorization},
	{StatusPending, StatusExpired},
	{StatusPendingAuthorization, StatusProcessing},
	{StatusPendingAuthorization, StatusPending},
	{StatusPendingAuthorization, StatusFailed},
	{StatusPendingAuthorization, StatusExpired},
	{StatusProcessing, StatusCompleted},
	{StatusProcessing, StatusFailed},
	{StatusCompleted, StatusFailed},
	{StatusFailed, StatusCompleted},
	{StatusFailed, StatusRefunded},
}

// IncomingMoves is the incoming transaction's table. Part A names CREATED
// but not its transitions (R-TXN-16): we allow CREATED and PENDING to move to
// PROCESSING, COMPLETED or FAILED, and PROCESSING to COMPLETED or FAILED; the
// rows Part A does give are the ACH return (COMPLETED → FAILED) and its
// dishonor (FAILED → COMPLETED).
var IncomingMoves = []Move{
	{StatusCreated, StatusPending},
	{StatusCreated, StatusProcessing},
	{StatusCreated, StatusCompleted},
	{StatusCreated, StatusFailed},
	{StatusPending, StatusProcessing},
	{StatusPending, StatusCompleted},
	{StatusPending, StatusFailed},
	{StatusProcessing, StatusCompleted},
	{StatusProcessing, StatusFailed},
	{StatusCompleted, StatusFailed},
	{StatusFailed, StatusCompleted},
	{StatusFailed, StatusRefunded},
}

// Allowed reports whether a transaction of typ may move from one status to
// another. Card transactions have their own rules elsewhere.
func Allowed(typ, from, to string) bool {
	var table []Move
	switch typ {
	case TypeOutgoing:
		table = OutgoingMoves
	case TypeIncoming:
		table = IncomingMoves
	default:
		return false
	}
	return slices.Contains(table, Move{from, to})
}

// QuoteStatuses are the transaction statuses a quote reports too: when an
// outgoing transaction enters one, Transition sets its quote's status to the
// same value in the same database transaction (the quote status follows its
// transaction, Part A).
var QuoteStatuses = []string{StatusPending, StatusPendingAuthorization, StatusProcessing, StatusCompleted,
	StatusFailed, StatusExpired}

// Transition changes a transaction inside the caller's database transaction:
// it checks the status move against the type's table (refused moves return
// an error wrapping ErrRefusedTransition and change nothing), writes the
// row, updates the quote's status for an outgoing transaction, and emits
// <TYPE>_PAYMENT.<STATUS> for a status change and
// <TYPE>_PAYMENT.REFUND_<STATUS> for a new refund status, data the
// transaction as it is afterwards. A Status equal to the current one is no
// status change (no event).
func Transition(ctx context.Context, tx *store.Tx, t store.Tenant, transactionID string, ch Change) (Transaction, error) {
	return Transitions(ctx, tx, t, transactionID, ch)
}

// Transitions is Transition for several changes made at once (an internal
// transfer goes PROCESSING then COMPLETED in one database transaction): each
// change is checked and emits its events, data the transaction as that
// change left it, as if Transition ran once per change; the row and the
// quote's status are written once.
func Transitions(ctx context.Context, tx *store.Tx, t store.Tenant, transactionID string, chs ...Change) (Transaction, error) {
	row, err := tx.GetTransactionForUpdate(ctx, t, transactionID)
	if errors.Is(err, store.ErrNotFound) {
		return Transaction{}, notFound(transactionID)
	}
	if err != nil {
		return Transaction{}, err
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	evs, out, quoteStatus, err := new(renderer).change(&row, now, chs)
	if err != nil {
		return Transaction{}, err
	}
	if err := tx.UpdateTransaction(ctx, row); err != nil {
		return Transaction{}, err
	}
	if quoteStatus != "" {
		if err := tx.SetQuoteStatusByTransaction(ctx, t, row.ID, quoteStatus, now); err != nil {
			return Transaction{}, err
		}
	}
	return out, emit(ctx, tx, t, evs)
}

// RecordChanged records a new transaction as the changes leave it: one
// INSERT, where Record and Transitions would write twice. Its events are
// those Record then Transitions would emit, each with the transaction as
// that step left it. quoteStatus is the status the transaction's quote is
// to take ("" for none); the caller, who stores the quote, writes it.
func RecordChanged(ctx context.Context, tx *store.Tx, t store.Tenant, n New, chs ...Change) (out Transaction, quoteStatus string, err error) {
	row, err := newRow(tx, t, n)
	if err != nil {
		return Transaction{}, "", err
	}
	// The creation's event shows the row as created: rendered now when
	// changes follow, else from the stored row below.
	var evs, more []pendingEvent
	r := new(renderer)
	if len(chs) > 0 {
		first, err := r.render(row)
		if err != nil {
			return Transaction{}, "", err
		}
		if typ := EventType(first.Type, first.Status); typ != "" {
			evs = append(evs, pendingEvent{typ, first})
		}
		if more, _, quoteStatus, err = r.change(&row, row.CreatedAt, chs); err != nil {
			return Transaction{}, "", err
		}
	}
	stored, err := create(ctx, tx, row, n.PlatformCustomerID)
	if err != nil {
		return Transaction{}, "", err
	}
	if out, err = r.render(stored); err != nil {
		return Transaction{}, "", err
	}
	if typ := EventType(out.Type, out.Status); len(chs) == 0 && typ != "" {
		evs = append(evs, pendingEvent{typ, out})
	}
	evs = append(evs, more...)
	for i := range evs { // known only once stored (the customer's)
		evs[i].out.PlatformCustomerID = out.PlatformCustomerID
	}
	return out, quoteStatus, emit(ctx, tx, t, evs)
}

// create inserts row: at the commit when the customer's platformCustomerId
// is known (or there is no customer), else at once, reading it.
func create(ctx context.Context, tx *store.Tx, row store.Transaction, platformCustomerID *string) (store.Transaction, error) {
	if platformCustomerID == nil {
		return tx.CreateTransaction(ctx, row)
	}
	row.PlatformCustomerID = *platformCustomerID
	return tx.CreateTransactionAtCommit(ctx, row)
}

type pendingEvent struct {
	typ string
	out Transaction
}

// change applies chs to row in memory, one after the other, and answers the
// events they call for, the transaction as the last left it and the quote
// status it implies ("" for none).
func (r *renderer) change(row *store.Transaction, now time.Time, chs []Change) (evs []pendingEvent, out Transaction, quoteStatus string, err error) {
	for _, ch := range chs {
		statusChanged, refundEvent, err := apply(row, ch)
		if err != nil {
			return nil, Transaction{}, "", err
		}
		row.UpdatedAt = now
		// row is what will be stored (every column is written as is).
		if out, err = r.render(*row); err != nil {
			return nil, Transaction{}, "", err
		}
		if statusChanged {
			if row.QuoteID != "" && slices.Contains(QuoteStatuses, row.Status) {
				quoteStatus = row.Status
			}
			if typ := EventType(out.Type, out.Status); typ != "" {
				evs = append(evs, pendingEvent{typ, out})
			}
		}
		if refundEvent != "" {
			if typ := EventType(out.Type, refundEvent); typ != "" {
				evs = append(evs, pendingEvent{typ, out})
			}
		}
	}
	return evs, out, quoteStatus, nil
}

func emit(ctx context.Context, tx *store.Tx, t store.Tenant, evs []pendingEvent) error {
	for _, e := range evs {
		if _, err := events.Emit(ctx, tx, t, e.typ, e.out.ID, e.out); err != nil {
			return err
		}
	}
	return nil
}

// apply makes one change to row in memory. It reports whether the status
// changed and the refund event the change calls for ("" for none).
func apply(row *store.Transaction, ch Change) (statusChanged bool, refundEvent string, err error) {
	statusChanged = ch.Status != "" && ch.Status != row.Status
	if statusChanged && !Allowed(row.Type, row.Status, ch.Status) {
		return false, "", fmt.Errorf("%w: %s %s from %s to %s", ErrRefusedTransition, row.Type, row.ID, row.Status, ch.Status)
	}
	if statusChanged {
		row.Status = ch.Status
		if row.Status != StatusPending {
			row.PendingReason = "" // the hold is over (R-TXN-30)
		}
	}
	if ch.PendingReason != "" {
		if row.Status != StatusPending || !slices.Contains(PendingReasons, ch.PendingReason) {
			return false, "", fmt.Errorf("transactions: pendingReason %q on a %s transaction", ch.PendingReason, row.Status)
		}
		row.PendingReason = ch.PendingReason
	}
	if ch.FailureReason != "" {
		row.FailureReason = ch.FailureReason
	}
	if ch.SettledAt != nil {
		s := ch.SettledAt.UTC().Truncate(time.Microsecond)
		row.SettledAt = &s
	}
	if ch.PaymentRail != "" {
		row.PaymentRail = ch.PaymentRail
	}
	if ch.LedgerTransferID != "" {
		row.LedgerTransferID = ch.LedgerTransferID
	}
	if ch.PaymentInstructions != nil {
		row.PaymentInstructions = ch.PaymentInstructions
	}
	if ch.HoldID != "" {
		row.HoldID = ch.HoldID
	}
	if ch.SourceRailDetails != nil {
		if row.Source, err = setRailDetails(row.Source, ch.SourceRailDetails); err != nil {
			return false, "", err
		}
	}
	if ch.DestinationRailDetails != nil {
		if row.Destination, err = setRailDetails(row.Destination, ch.DestinationRailDetails); err != nil {
			return false, "", err
		}
	}
	if ch.Refund != nil {
		var old Refund
		if len(row.Refund) > 0 {
			_ = json.Unmarshal(row.Refund, &old)
		}
		r := *ch.Refund
		r.InitiatedAt = r.InitiatedAt.UTC().Truncate(time.Microsecond)
		if r.SettledAt != nil {
			s := r.SettledAt.UTC().Truncate(time.Microsecond)
			r.SettledAt = &s
		}
		if row.Refund, err = json.Marshal(r); err != nil {
			return false, "", err
		}
		if r.Status != "" && r.Status != old.Status {
			refundEvent = "REFUND_" + r.Status
		}
	}
	return statusChanged, refundEvent, nil
}

// setRailDetails replaces railDetails in a side's stored JSON object.
func setRailDetails(side []byte, details json.RawMessage) ([]byte, error) {
	m := map[string]json.RawMessage{}
	if len(side) > 0 {
		if err := json.Unmarshal(side, &m); err != nil {
			return nil, fmt.Errorf("transactions: stored side: %w", err)
		}
	}
	if len(details) == 0 || string(details) == "null" {
		delete(m, "railDetails")
	} else {
		m["railDetails"] = details
	}
	return json.Marshal(m)
}
