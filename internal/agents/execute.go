package agents

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/quotes"
	"github.com/paymentsd/paymentsd/internal/store"
)

// limitError is a spending limit the execution would pass: 403 to the
// agent, FAILED SPENDING_LIMIT_EXCEEDED on an approval.
type limitError struct{ limit string }

func (e *limitError) Error() string { return "agents: " + e.limit + " exceeded" }

func (e *limitError) Unwrap() error {
	err := apierr.Forbidden("This would take the agent past its policy's " + e.limit + "; nothing was executed")
	err.Details = map[string]any{"limit": e.limit}
	return err
}

// amountIn converts an amount to cur, rounding up.
func (s *Service) amountIn(ctx context.Context, env string, amount int64, from, cur string) (int64, error) {
	if from == cur || cur == "" {
		return amount, nil
	}
	if s.Convert == nil {
		return 0, apierr.New("QUOTE_RATE_UNAVAILABLE", "No exchange rate to compare "+from+" with the policy's "+cur)
	}
	return s.Convert(ctx, env, amount, from, cur)
}

// ruleFor returns the policy's rule for an account, if any.
func (p Policy) ruleFor(accountID string) (AccountRule, bool) {
	for _, r := range p.AccountRestrictions.AccountRules {
		if r.AccountID == accountID {
			return r, true
		}
	}
	return AccountRule{}, false
}

// evaluate applies the policy to an operation of amount (policy currency)
// from accountID: refused (account not allowed, over the per-transaction
// limit) or allowed, at once or after approval (R-AGENT-14).
func (s *Service) evaluate(ctx context.Context, c Caller, accountID string, amount, sent int64, sentCur string) (bool, error) {
	p := c.Policy
	if allowed := p.AccountRestrictions.AllowedAccountIDs; allowed != nil && !slices.Contains(allowed, accountID) {
		return false, apierr.Forbidden("The agent's policy does not allow account " + accountID)
	}
	rule, _ := p.ruleFor(accountID)
	perTx := p.SpendingLimits.PerTransactionLimit
	if rule.PerTransactionLimit != nil {
		perTx = *rule.PerTransactionLimit
	}
	if amount > perTx {
		return false, &limitError{limit: "perTransactionLimit"}
	}
	mode := p.DefaultExecutionMode
	if rule.ExecutionMode != "" {
		mode = rule.ExecutionMode
	}
	if mode == ModeApprovalRequired {
		return true, nil
	}
	th := p.ApprovalThresholds
	if th.Amount == nil {
		return false, nil
	}
	over, err := s.amountIn(ctx, c.Agent.Tenant.Env, sent, sentCur, th.Currency)
	if err != nil {
		return false, err
	}
	return over > *th.Amount, nil
}

// addUsage counts one execution of amount against the day's and month's
// limits, in the execution's transaction: a concurrent execution waits on
// the same rows (day, then month, in that order always) and sees this one's
// amount, so together they never pass a limit.
func addUsage(ctx context.Context, tx *store.Tx, c Caller, amount int64) error {
	l := c.Policy.SpendingLimits
	now := tx.Now()
	maxDay, maxCount, maxMonth := int64(-1), int64(-1), int64(-1)
	if l.DailyLimit != nil {
		maxDay = *l.DailyLimit
	}
	if l.DailyTransactionLimit != nil {
		maxCount = *l.DailyTransactionLimit
	}
	if l.MonthlyLimit != nil {
		maxMonth = *l.MonthlyLimit
	}
	ok, err := tx.AddAgentUsage(ctx, c.Agent.ID, dayPeriod(now), amount, maxDay, maxCount)
	if err != nil {
		return err
	}
	if !ok {
		if l.DailyLimit != nil && amount > maxDay {
			return &limitError{limit: "dailyLimit"}
		}
		return &limitError{limit: "dailyLimit or dailyTransactionLimit"}
	}
	ok, err = tx.AddAgentUsage(ctx, c.Agent.ID, monthPeriod(now), amount, maxMonth, -1)
	if err != nil {
		return err
	}
	if !ok {
		return &limitError{limit: "monthlyLimit"}
	}
	return nil
}

// agentQuote reads a quote of the agent's customer; any other is 404
// (R-AUTH-08).
func (s *Service) agentQuote(ctx context.Context, c Caller, quoteID string) (quotes.Quote, error) {
	if !id.Valid(id.Quote, quoteID) {
		return quotes.Quote{}, apierr.NotFound("QUOTE_NOT_FOUND", "Quote "+short(quoteID))
	}
	q, customerID, err := s.Quotes.Read(ctx, s.DB.Read(), c.Agent.Tenant, quoteID)
	if err == nil && customerID != c.Agent.CustomerID {
		return quotes.Quote{}, apierr.NotFound("QUOTE_NOT_FOUND", "Quote "+quoteID)
	}
	return q, err
}

// hooks are the execution hooks of one agent: its delegated key signs an
// embedded wallet's payload (R-AGENT-33), before reports its checks, and
// the quote's transaction records the agent (R-TXN-38).
func (s *Service) hooks(c Caller, before func(ctx context.Context, tx *store.Tx, q quotes.Quote) error) quotes.ExecHooks {
	h := quotes.ExecHooks{Before: func(ctx context.Context, tx *store.Tx, q quotes.Quote, customerID string) error {
		if customerID != c.Agent.CustomerID {
			return apierr.NotFound("QUOTE_NOT_FOUND", "Quote "+q.ID)
		}
		if err := before(ctx, tx, q); err != nil {
			return err
		}
		// The agent initiated the transaction (R-TXN-38): recorded before
		// it moves, so its events carry agentId too.
		return tx.SetTransactionAgent(ctx, c.Agent.Tenant, q.TransactionID, c.Agent.ID)
	}}
	if s.Signer != nil {
		agentID := c.Agent.ID
		h.SignWallet = func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, payload string) (string, error) {
			return s.Signer.SignAsAgent(ctx, tx, t, agentID, accountID, payload)
		}
		h.VerifyWallet = s.Signer.VerifyAgentStamp(agentID)
	}
	return h
}

// ExecuteQuote submits an EXECUTE_QUOTE action for a quote of the agent's
// customer (R-AGENT-33): refused outside the policy, executed at once when
// the policy allows, else PENDING_APPROVAL until the platform decides
// (R-AGENT-14), expiring with its quote (R-AGENT-16).
func (s *Service) ExecuteQuote(ctx context.Context, c Caller, quoteID string) (Action, error) {
	if err := c.Require(PermExecuteQuotes); err != nil {
		return Action{}, err
	}
	q, err := s.agentQuote(ctx, c, quoteID)
	if err != nil {
		return Action{}, err
	}
	return s.submit(ctx, c, q, TypeExecuteQuote, nil)
}

// submit applies the policy to an operation priced by quote q and runs or
// queues it as an action of type typ.
func (s *Service) submit(ctx context.Context, c Caller, q quotes.Quote, typ string, details []byte) (Action, error) {
	amount, err := s.amountIn(ctx, c.Agent.Tenant.Env, q.TotalSendingAmount, q.SendingCurrency.Code, c.Policy.SpendingLimits.Currency)
	if err != nil {
		return Action{}, err
	}
	approval, err := s.evaluate(ctx, c, q.Source.AccountID, amount, q.TotalSendingAmount, q.SendingCurrency.Code)
	if err != nil {
		return Action{}, err
	}
	row := store.AgentAction{ID: id.New(id.AgentAction), Tenant: c.Agent.Tenant, AgentID: c.Agent.ID,
		CustomerID: c.Agent.CustomerID, Type: typ, QuoteID: q.ID, TransactionID: q.TransactionID,
		Amount: amount, NeedsApproval: approval, Details: details}
	var moved *priceMoved
	switch perr := s.checkPrice(ctx, c.Agent.Tenant, q); {
	case approval:
		row, err = s.submitForApproval(ctx, c, row)
	case errors.As(perr, &moved):
		row, err = s.recordMoved(ctx, row)
	case perr != nil:
		return Action{}, perr
	default:
		row, err = s.executeNow(ctx, c, row)
	}
	if err != nil {
		return Action{}, err
	}
	return s.renderAction(ctx, s.DB.Read(), row)
}

// openAction refuses a second action on a quote that has one waiting or
// done.
func openAction(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string) error {
	open, err := tx.OpenAgentActionForQuote(ctx, t, quoteID)
	if err != nil {
		return err
	}
	if open != "" {
		return apierr.Conflict("Quote " + quoteID + " already has agent action " + open)
	}
	return nil
}

// submitForApproval stores the action PENDING_APPROVAL, expiring with its
// quote, and tells the platform (AGENT_ACTION.PENDING_APPROVAL).
func (s *Service) submitForApproval(ctx context.Context, c Caller, row store.AgentAction) (store.AgentAction, error) {
	t := c.Agent.Tenant
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		qrow, err := tx.GetQuote(ctx, t, row.QuoteID, true)
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		if qrow.Status != quotes.StatusPending || !now.Before(qrow.ExpiresAt) {
			if qrow.Status == quotes.StatusPending || qrow.Status == quotes.StatusExpired {
				return apierr.Newf("QUOTE_EXPIRED", "Quote %s expired; create a new quote", qrow.ID)
			}
			return apierr.Conflict("Quote " + qrow.ID + " is " + qrow.Status + ": it was already executed")
		}
		if err := openAction(ctx, tx, t, row.QuoteID); err != nil {
			return err
		}
		expires := qrow.ExpiresAt
		row.ExpiresAt = &expires
		if err := submit(ctx, tx, &row, evSubmitApproval, 0); err != nil {
			return err
		}
		return s.emit(ctx, tx, row)
	})
	return row, err
}

// executeNow executes the quote with the action APPROVED in one
// transaction; the spending counts in it too, so a refusal moves nothing.
func (s *Service) executeNow(ctx context.Context, c Caller, row store.AgentAction) (store.AgentAction, error) {
	_, err := s.Quotes.ExecuteWith(ctx, c.Agent.Tenant, row.QuoteID, s.hooks(c, func(ctx context.Context, tx *store.Tx, q quotes.Quote) error {
		if err := openAction(ctx, tx, c.Agent.Tenant, row.QuoteID); err != nil {
			return err
		}
		if err := addUsage(ctx, tx, c, row.Amount); err != nil {
			return err
		}
		return submit(ctx, tx, &row, evSubmitAuto, 0)
	}))
	return row, err
}

// executeApproved runs an approved action's operation with the action
// moving to APPROVED in the same transaction, counting against the policy
// as it stands now.
func (s *Service) executeApproved(ctx context.Context, c Caller, a store.AgentAction) error {
	switch a.Type {
	case TypeExecuteQuote, TypeTransferOut, TypeTransferIn:
	case TypePurchaseCard:
		return s.approveCard(ctx, c, a)
	default:
		return errors.New("agents: unknown action type " + a.Type)
	}
	_, err := s.Quotes.ExecuteWith(ctx, c.Agent.Tenant, a.QuoteID, s.hooks(c, func(ctx context.Context, tx *store.Tx, q quotes.Quote) error {
		if _, err := s.decideApproved(ctx, tx, c, a); err != nil {
			return err
		}
		return nil
	}))
	return err
}

// decideApproved moves the locked action to APPROVED and counts its amount.
func (s *Service) decideApproved(ctx context.Context, tx *store.Tx, c Caller, a store.AgentAction) (store.AgentAction, error) {
	cur, err := tx.GetAgentAction(ctx, a.Tenant, a.ID, true)
	if err != nil {
		return cur, err
	}
	if cur.Status != StatusPendingApproval {
		_, err := next(cur.Status, evApprove)
		return cur, &decidedError{err: err}
	}
	if err := addUsage(ctx, tx, c, cur.Amount); err != nil {
		return cur, err
	}
	return s.decide(ctx, tx, a.Tenant, a.AgentID, a.ID, evApprove, nil)
}

// recordMoved stores the action FAILED with PRICE_MOVED: nothing is sent
// (R-AGENT-31).
func (s *Service) recordMoved(ctx context.Context, row store.AgentAction) (store.AgentAction, error) {
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row.FailureReason = FailPriceMoved
		return submit(ctx, tx, &row, evSubmitMoved, 0)
	})
	return row, err
}
