package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/quotes"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Action statuses (R-AGENT-21).
const (
	StatusPendingApproval = "PENDING_APPROVAL"
	StatusApproved        = "APPROVED"
	StatusRejected        = "REJECTED"
	StatusFailed          = "FAILED"
)

// Action types (R-AGENT-22): the reference's EXECUTE_QUOTE, TRANSFER_OUT
// and TRANSFER_IN.
const (
	TypeExecuteQuote = "EXECUTE_QUOTE"
	TypeTransferOut  = "TRANSFER_OUT"
	TypeTransferIn   = "TRANSFER_IN"
)

// Failure reasons (R-AGENT-21): QUOTE_EXPIRED and PRICE_MOVED are the
// spec's; an execution refused at approval keeps the refusal's error code
// (INSUFFICIENT_FUNDS, …), and SPENDING_LIMIT_EXCEEDED when the policy's
// limits no longer allow it.
const (
	FailQuoteExpired  = "QUOTE_EXPIRED"
	FailPriceMoved    = "PRICE_MOVED"
	FailSpendingLimit = "SPENDING_LIMIT_EXCEEDED"
)

// Events on an action's way (Part A "Agent action").
const (
	evSubmitAuto     = "submit, policy allows it"
	evSubmitApproval = "submit, policy requires approval"
	evSubmitMoved    = "submit, price moved below the quote's minimum"
	evApprove        = "approve, operation executed"
	evApproveFailed  = "approve, operation failed (quote expired, price moved, limits, funds)"
	evReject         = "reject"
	evExpire         = "expiry passed while waiting"
)

// transition is one row of the action state machine.
type transition struct{ From, Event, To string }

// transitions is the whole state machine (Part A "Agent action"): only a
// PENDING_APPROVAL action can be decided (R-AGENT-20).
var transitions = []transition{
	{"", evSubmitAuto, StatusApproved},
	{"", evSubmitApproval, StatusPendingApproval},
	{"", evSubmitMoved, StatusFailed},
	{StatusPendingApproval, evApprove, StatusApproved},
	{StatusPendingApproval, evApproveFailed, StatusFailed},
	{StatusPendingApproval, evReject, StatusRejected},
	{StatusPendingApproval, evExpire, StatusFailed},
}

// next returns the status an event moves from to, or 409.
func next(from, event string) (string, error) {
	for _, tr := range transitions {
		if tr.From == from && tr.Event == event {
			return tr.To, nil
		}
	}
	return "", apierr.Conflict(fmt.Sprintf("The action is %s: only a PENDING_APPROVAL action can be approved or rejected", from))
}

// submit stores a new action in the status event gives it, created now; a
// positive ttl makes it expire that long after its creation.
func submit(ctx context.Context, tx *store.Tx, row *store.AgentAction, event string, ttl time.Duration) error {
	to, err := next("", event)
	if err != nil {
		return err
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	row.Status, row.CreatedAt, row.UpdatedAt = to, now, now
	if ttl > 0 {
		expires := now.Add(ttl)
		row.ExpiresAt = &expires
	}
	return tx.InsertAgentAction(ctx, *row)
}

// TransferDetails describe a transfer action.
type TransferDetails struct {
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
}

// Action is the API resource AgentAction (R-AGENT-21).
type Action struct {
	ID                 string                    `json:"id"`
	AgentID            string                    `json:"agentId"`
	CustomerID         string                    `json:"customerId"`
	PlatformCustomerID string                    `json:"platformCustomerId"`
	Status             string                    `json:"status"`
	Type               string                    `json:"type"`
	ExpiresAt          *time.Time                `json:"expiresAt,omitempty"`
	Quote              *quotes.Quote             `json:"quote,omitempty"`
	TransferDetails    *TransferDetails          `json:"transferDetails,omitempty"`
	PurchaseCard       *PurchaseCard             `json:"purchaseCard,omitempty"`
	Card               *Card                     `json:"card,omitempty"`
	Transaction        *transactions.Transaction `json:"transaction,omitempty"`
	RejectionReason    string                    `json:"rejectionReason,omitempty"`
	FailureReason      string                    `json:"failureReason,omitempty"`
	CreatedAt          time.Time                 `json:"createdAt"`
	UpdatedAt          time.Time                 `json:"updatedAt"`
}

func actionNotFound(actionID string) error {
	return apierr.NotFound("NOT_FOUND", "Agent action "+short(actionID))
}

// renderAction builds the resource through q.
func (s *Service) renderAction(ctx context.Context, q store.Q, a store.AgentAction) (Action, error) {
	c, err := q.GetCustomer(ctx, a.Tenant, a.CustomerID, false)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Action{}, err
	}
	out := Action{ID: a.ID, AgentID: a.AgentID, CustomerID: a.CustomerID, PlatformCustomerID: c.PlatformCustomerID,
		Status: a.Status, Type: a.Type, ExpiresAt: a.ExpiresAt, RejectionReason: a.RejectionReason,
		FailureReason: a.FailureReason, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if a.QuoteID != "" && a.Type == TypeExecuteQuote {
		qt, _, err := s.Quotes.Read(ctx, q, a.Tenant, a.QuoteID)
		if err != nil {
			return Action{}, err
		}
		out.Quote = &qt
	}
	if a.Type == TypePurchaseCard {
		if err := s.purchaseOf(ctx, q, a, &out); err != nil {
			return Action{}, err
		}
	} else if a.Type != TypeExecuteQuote {
		var d TransferDetails
		if err := json.Unmarshal(a.Details, &d); err != nil {
			return Action{}, err
		}
		out.TransferDetails = &d
	}
	if a.TransactionID != "" && a.Status == StatusApproved {
		row, err := q.GetTransaction(ctx, a.Tenant, a.TransactionID)
		if err != nil {
			return Action{}, err
		}
		x, err := transactions.Render(row)
		if err != nil {
			return Action{}, err
		}
		out.Transaction = &x
	}
	return out, nil
}

// emit sends the action's event in its transaction: one for every action
// that waits for approval and one for every decision.
func (s *Service) emit(ctx context.Context, tx *store.Tx, a store.AgentAction) error {
	r, err := s.renderAction(ctx, tx.Q, a)
	if err != nil {
		return err
	}
	_, err = events.Emit(ctx, tx, a.Tenant, events.AgentAction(a.Status), a.ID, r)
	return err
}

// GetAction returns one of the agent's actions (R-AGENT-27).
func (s *Service) GetAction(ctx context.Context, c Caller, actionID string) (Action, error) {
	if !id.Valid(id.AgentAction, actionID) {
		return Action{}, actionNotFound(actionID)
	}
	a, err := s.DB.Read().GetAgentAction(ctx, c.Agent.Tenant, actionID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.AgentID != c.Agent.ID) {
		return Action{}, actionNotFound(actionID)
	}
	if err != nil {
		return Action{}, err
	}
	return s.renderAction(ctx, s.DB.Read(), a)
}

// ListActions lists actions of the tenant: the agent's own
// (R-AGENT-27), or the approval requests (R-AGENT-10).
func (s *Service) ListActions(ctx context.Context, t store.Tenant, f store.AgentActionFilter, after string, limit int) ([]Action, int, error) {
	rows, total, err := s.DB.Read().ListAgentActions(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Action, 0, len(rows))
	for _, a := range rows {
		r, err := s.renderAction(ctx, s.DB.Read(), a)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, total, nil
}

// RejectRequest is the optional body of the reject endpoint.
type RejectRequest struct {
	Reason *string `json:"reason"`
}

// MaxReason bounds a rejection reason.
const MaxReason = 1024

// Validate checks the request on its own.
func (r RejectRequest) Validate() error {
	var f apierr.Fields
	if r.Reason != nil && len([]rune(*r.Reason)) > MaxReason {
		f.Add("reason", apierr.MaxLength, "must be at most %d characters", MaxReason)
	}
	return f.Err()
}

// decide locks a PENDING_APPROVAL action of the agent and moves it by
// event, running fn on it first; it emits the decision's event.
func (s *Service) decide(ctx context.Context, tx *store.Tx, t store.Tenant, agentID, actionID, event string, fn func(a *store.AgentAction)) (store.AgentAction, error) {
	a, err := tx.GetAgentAction(ctx, t, actionID, true)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.AgentID != agentID) {
		return a, actionNotFound(actionID)
	}
	if err != nil {
		return a, err
	}
	to, err := next(a.Status, event)
	if err != nil {
		return a, err
	}
	a.Status, a.UpdatedAt = to, tx.Now().UTC().Truncate(time.Microsecond)
	if fn != nil {
		fn(&a)
	}
	if err := tx.UpdateAgentAction(ctx, a); err != nil {
		return a, err
	}
	return a, s.emit(ctx, tx, a)
}

// Reject rejects a PENDING_APPROVAL action: nothing executes (R-AGENT-19).
func (s *Service) Reject(ctx context.Context, t store.Tenant, agentID, actionID string, req RejectRequest) (Action, error) {
	if err := req.Validate(); err != nil {
		return Action{}, err
	}
	if !id.Valid(id.AgentAction, actionID) {
		return Action{}, actionNotFound(actionID)
	}
	var out Action
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := s.decide(ctx, tx, t, agentID, actionID, evReject, func(a *store.AgentAction) {
			a.RejectionReason = deref(req.Reason)
		})
		if err != nil {
			return err
		}
		out, err = s.renderAction(ctx, tx.Q, a)
		return err
	})
	return out, err
}

// Approve approves a PENDING_APPROVAL action: its operation executes in the
// same transaction that marks it APPROVED (R-AGENT-17). An operation that
// cannot execute any more fails the action instead: an expired quote is
// FAILED with QUOTE_EXPIRED and no new quote is made (R-AGENT-18).
func (s *Service) Approve(ctx context.Context, t store.Tenant, agentID, actionID string) (Action, error) {
	if !id.Valid(id.AgentAction, actionID) || !id.Valid(id.Agent, agentID) {
		return Action{}, actionNotFound(actionID)
	}
	a, err := s.DB.Read().GetAgentAction(ctx, t, actionID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.AgentID != agentID) {
		return Action{}, actionNotFound(actionID)
	}
	if err != nil {
		return Action{}, err
	}
	if _, err := next(a.Status, evApprove); err != nil {
		return Action{}, err
	}
	agent, err := s.DB.Read().GetAgent(ctx, t, agentID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Action{}, apierr.Conflict("Agent " + agentID + " was deleted: its actions can no longer be approved")
	}
	if err != nil {
		return Action{}, err
	}
	p, err := decodePolicy(agent)
	if err != nil {
		return Action{}, err
	}
	err = s.priceStillHolds(ctx, t, a)
	if err == nil {
		err = s.executeApproved(ctx, Caller{Agent: agent, Policy: p}, a)
	}
	if failure, ok := failureOf(err); ok {
		err = s.fail(ctx, t, agentID, actionID, failure)
	}
	if err != nil {
		return Action{}, err
	}
	a, err = s.DB.Read().GetAgentAction(ctx, t, actionID, false)
	if err != nil {
		return Action{}, err
	}
	return s.renderAction(ctx, s.DB.Read(), a)
}

// failureOf tells an execution that cannot succeed (its reason) from a
// decision lost to another one or an internal error.
func failureOf(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	var moved *priceMoved
	if errors.As(err, &moved) {
		return FailPriceMoved, true
	}
	var lim *limitError
	if errors.As(err, &lim) {
		return FailSpendingLimit, true
	}
	var decided *decidedError
	if errors.As(err, &decided) {
		return "", false
	}
	e, ok := apierr.From(err)
	if !ok || e.Status >= 500 {
		return "", false
	}
	return e.Code, true
}

// fail marks a still PENDING_APPROVAL action FAILED with reason.
func (s *Service) fail(ctx context.Context, t store.Tenant, agentID, actionID, reason string) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := s.decide(ctx, tx, t, agentID, actionID, evApproveFailed, func(a *store.AgentAction) {
			a.FailureReason = reason
		})
		return err
	})
}

// decidedError: the action was decided by a concurrent request.
type decidedError struct{ err error }

func (e *decidedError) Error() string { return e.err.Error() }
func (e *decidedError) Unwrap() error { return e.err }

// ExpireDue fails up to limit PENDING_APPROVAL actions of any tenant whose
// expiresAt has passed (quote actions with their quote, R-AGENT-16;
// purchase-card actions five minutes after creation, R-AGENT-15) and
// reports how many. Safe on several nodes (each is re-read under lock).
func (s *Service) ExpireDue(ctx context.Context, limit int) (int, error) {
	due, err := s.DB.Read().DueAgentActions(ctx, s.DB.Now(), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range due {
		err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.GetAgentAction(ctx, a.Tenant, a.ID, true)
			if err != nil || cur.Status != StatusPendingApproval || cur.ExpiresAt == nil || tx.Now().Before(*cur.ExpiresAt) {
				return err
			}
			_, err = s.decide(ctx, tx, a.Tenant, a.AgentID, a.ID, evExpire, func(x *store.AgentAction) {
				x.FailureReason = FailQuoteExpired
				if x.Type == TypePurchaseCard {
					x.FailureReason = FailExpired // R-AGENT-15: five minutes passed
				}
			})
			return err
		})
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// priceStillHolds checks a quote action's minimumReceivingAmount against the
// price now (R-AGENT-31).
func (s *Service) priceStillHolds(ctx context.Context, t store.Tenant, a store.AgentAction) error {
	if a.QuoteID == "" {
		return nil
	}
	q, _, err := s.Quotes.Read(ctx, s.DB.Read(), t, a.QuoteID)
	if err != nil {
		return err
	}
	return s.checkPrice(ctx, t, q)
}
