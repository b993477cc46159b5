package agents

import (
	"context"
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Agents' purchase cards (R-AGENT-37..43): an agent with MANAGE_CARDS
// issues SINGLE_USE or MERCHANT_LOCKED USD cards for its customer through
// the cards capability (cards.Service.IssueForAgent), as an action of type
// PURCHASE_CARD that its policy decides like a payment: its amount counts
// against the per-transaction, daily and monthly limits, and approval
// thresholds and APPROVAL_REQUIRED send it to the platform.

// TypePurchaseCard is the action type of a card issuance.
const TypePurchaseCard = "PURCHASE_CARD"

// PurchaseCardTTL is how long a purchase-card action waits for approval
// (R-AGENT-15).
const PurchaseCardTTL = 5 * time.Minute

// FailExpired is the failure reason of a purchase-card action whose five
// minutes passed before a decision.
const FailExpired = "EXPIRED"

// Codes of refused issuance preconditions (R-AGENT-38); an unverified
// customer is CARDHOLDER_KYC_NOT_APPROVED, as for any card.
const (
	CodePolicyNotUSD        = apierr.CodeAgentPolicyNotUSD
	CodeDelegatedKeyMissing = apierr.CodeAgentDelegatedKeyMissing
)

// MaxMemo bounds a purchase card's memo.
const MaxMemo = 512

// PurchaseCard is AgentAction.purchaseCard (R-AGENT-23).
type PurchaseCard struct {
	Kind            string `json:"kind"`
	Currency        string `json:"currency"`
	Amount          int64  `json:"amount"`
	SourceAccountID string `json:"sourceAccountId"`
	Memo            string `json:"memo,omitempty"`
}

// purchaseDetails is what a PURCHASE_CARD action stores: the request, and
// the card once issued.
type purchaseDetails struct {
	PurchaseCard
	CardID string `json:"cardId,omitempty"`
}

// SpendLimit is an agent card's spending limit: the purchase amount per
// TRANSACTION.
type SpendLimit struct {
	Amount   int64  `json:"amount"`
	Duration string `json:"duration"`
}

// Card is the agent card wrapper (AgentAction.card, R-AGENT-23): the card,
// its agent and kind, the MCCs it blocks (agent defaults, platform and its
// own), its spend limit, what its open authorizations hold, and when it
// expires (the first instant after its expiry month).
type Card struct {
	Card                 cards.Card `json:"card"`
	AgentID              string     `json:"agentId"`
	AgentCardKind        string     `json:"agentCardKind"`
	EffectiveBlockedMccs []string   `json:"effectiveBlockedMccs"`
	SpendLimit           SpendLimit `json:"spendLimit"`
	ReservedAmount       int64      `json:"reservedAmount"`
	ExpiresAt            time.Time  `json:"expiresAt"`
}

// CardRequest is the body of POST /agents/me/cards.
type CardRequest struct {
	Kind            *string `json:"kind"`
	Currency        *string `json:"currency"`
	Amount          *int64  `json:"amount"`
	SourceAccountID *string `json:"sourceAccountId"`
	Memo            *string `json:"memo"`
}

// Validate checks the request on its own.
func (r CardRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Kind == nil:
		f.Add("kind", apierr.Required, "is required: SINGLE_USE or MERCHANT_LOCKED")
	case !slices.Contains(cards.AgentKinds, *r.Kind):
		f.Add("kind", apierr.Enum, "must be SINGLE_USE or MERCHANT_LOCKED")
	}
	switch {
	case r.Currency == nil:
		f.Add("currency", apierr.Required, "is required: USD")
	case *r.Currency != cards.AgentCurrency:
		f.Add("currency", apierr.Enum, "must be USD: agents issue USD purchase cards")
	}
	switch {
	case r.Amount == nil:
		f.Add("amount", apierr.Required, "is required: the most the card may spend per transaction, in cents")
	case *r.Amount < 1:
		f.Add("amount", apierr.Minimum, "must be a positive integer")
	}
	switch {
	case r.SourceAccountID == nil:
		f.Add("sourceAccountId", apierr.Required, "is required: the customer's internal account that funds the card")
	case !id.Valid(id.InternalAccount, *r.SourceAccountID):
		f.Add("sourceAccountId", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
	}
	if r.Memo != nil && utf8.RuneCountInString(*r.Memo) > MaxMemo {
		f.Add("memo", apierr.MaxLength, "must be at most %d characters", MaxMemo)
	}
	return f.Err()
}

func (r CardRequest) purchase() PurchaseCard {
	return PurchaseCard{Kind: *r.Kind, Currency: *r.Currency, Amount: *r.Amount, SourceAccountID: *r.SourceAccountID,
		Memo: deref(r.Memo)}
}

func issueOf(c Caller, p PurchaseCard) cards.AgentIssue {
	return cards.AgentIssue{AgentID: c.Agent.ID, Kind: p.Kind, CustomerID: c.Agent.CustomerID,
		FundingSource: p.SourceAccountID, Amount: p.Amount}
}

// checkIssue refuses an issuance whose preconditions fail (R-AGENT-38): a
// USD policy, an ACTIVE delegated key of the agent, the funding account of
// the agent's customer, a verified customer and a USD-card account.
func (s *Service) checkIssue(ctx context.Context, q store.Q, c Caller, p PurchaseCard) error {
	if cur := c.Policy.SpendingLimits.Currency; cur != cards.AgentCurrency {
		return apierr.Newf(CodePolicyNotUSD, "The agent's policy limits spending in %s; purchase cards need a USD policy", cur)
	}
	ok, err := q.HasActiveAgentKey(ctx, c.Agent.Tenant, c.Agent.ID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.New(CodeDelegatedKeyMissing, "The agent has no ACTIVE delegated key: its customer must create one "+
			"with POST /auth/delegated-keys (agentId) before the agent issues cards")
	}
	if err := ownAccount(ctx, q, c, p.SourceAccountID); err != nil {
		return err
	}
	return s.Cards.CheckAgentIssue(ctx, q, c.Agent.Tenant, issueOf(c, p))
}

// IssueCard submits a PURCHASE_CARD action (R-AGENT-37): refused outside the
// policy or its preconditions, issued at once when the policy allows (the
// card, 201), else PENDING_APPROVAL for five minutes (the action, 202;
// R-AGENT-39, R-AGENT-15).
func (s *Service) IssueCard(ctx context.Context, c Caller, req CardRequest) (*Card, *Action, error) {
	if err := c.Require(PermManageCards); err != nil {
		return nil, nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	p := req.purchase()
	if err := s.checkIssue(ctx, s.DB.Read(), c, p); err != nil {
		return nil, nil, err
	}
	approval, err := s.evaluate(ctx, c, p.SourceAccountID, p.Amount, p.Amount, cards.AgentCurrency)
	if err != nil {
		return nil, nil, err
	}
	details, err := json.Marshal(purchaseDetails{PurchaseCard: p})
	if err != nil {
		return nil, nil, err
	}
	row := store.AgentAction{ID: id.New(id.AgentAction), Tenant: c.Agent.Tenant, AgentID: c.Agent.ID,
		CustomerID: c.Agent.CustomerID, Type: TypePurchaseCard, Amount: p.Amount, NeedsApproval: approval, Details: details}
	if approval {
		if row, err = s.submitCardForApproval(ctx, row); err != nil {
			return nil, nil, err
		}
		a, err := s.renderAction(ctx, s.DB.Read(), row)
		return nil, &a, err
	}
	out, err := s.issueNow(ctx, c, row, p)
	if err != nil {
		return nil, nil, err
	}
	return &out, nil, nil
}

// issueNow issues the card with the action APPROVED in one transaction; the
// amount counts against the policy in it too, so a refusal issues nothing.
func (s *Service) issueNow(ctx context.Context, c Caller, row store.AgentAction, p PurchaseCard) (Card, error) {
	var out Card
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := addUsage(ctx, tx, c, row.Amount); err != nil {
			return err
		}
		card, err := s.issueInTx(ctx, tx, c, &row, p)
		if err != nil {
			return err
		}
		if err := submit(ctx, tx, &row, evSubmitAuto, 0); err != nil {
			return err
		}
		out, err = s.cardView(ctx, tx.Q, card)
		return err
	})
	return out, err
}

// issueInTx issues the card in tx and records it on the action's details.
func (s *Service) issueInTx(ctx context.Context, tx *store.Tx, c Caller, row *store.AgentAction, p PurchaseCard) (store.Card, error) {
	issued, err := s.Cards.IssueForAgent(ctx, tx, c.Agent.Tenant, issueOf(c, p))
	if err != nil {
		return store.Card{}, err
	}
	if row.Details, err = json.Marshal(purchaseDetails{PurchaseCard: p, CardID: issued.ID}); err != nil {
		return store.Card{}, err
	}
	return tx.GetCard(ctx, c.Agent.Tenant, issued.ID, false)
}

// submitCardForApproval stores the action PENDING_APPROVAL, expiring five
// minutes after its creation (R-AGENT-15), and tells the platform
// (AGENT_ACTION.PENDING_APPROVAL).
func (s *Service) submitCardForApproval(ctx context.Context, row store.AgentAction) (store.AgentAction, error) {
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := submit(ctx, tx, &row, evSubmitApproval, PurchaseCardTTL); err != nil {
			return err
		}
		return s.emit(ctx, tx, row)
	})
	return row, err
}

// approveCard issues an approved PURCHASE_CARD action's card with the
// action moving to APPROVED in one transaction, counting its amount against
// the policy and checking the preconditions as they stand now (a refusal
// fails the action with its code). Past its five minutes it fails EXPIRED.
func (s *Service) approveCard(ctx context.Context, c Caller, a store.AgentAction) error {
	if a.ExpiresAt != nil && !s.DB.Now().Before(*a.ExpiresAt) {
		return apierr.New(FailExpired, "The purchase-card action expired before it was approved")
	}
	var d purchaseDetails
	if err := json.Unmarshal(a.Details, &d); err != nil {
		return err
	}
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.GetAgentAction(ctx, a.Tenant, a.ID, true)
		if err != nil {
			return err
		}
		if cur.Status != StatusPendingApproval {
			_, err := next(cur.Status, evApprove)
			return &decidedError{err: err}
		}
		// The preconditions as they stand now: the key may have been revoked.
		if err := s.checkIssue(ctx, tx.Q, c, d.PurchaseCard); err != nil {
			return err
		}
		if err := addUsage(ctx, tx, c, cur.Amount); err != nil {
			return err
		}
		if _, err := s.issueInTx(ctx, tx, c, &cur, d.PurchaseCard); err != nil {
			return err
		}
		_, err = s.decide(ctx, tx, a.Tenant, a.AgentID, a.ID, evApprove, func(x *store.AgentAction) {
			x.Details = cur.Details
		})
		return err
	})
}

// cardView builds the agent card wrapper of a card row.
func (s *Service) cardView(ctx context.Context, q store.Q, row store.Card) (Card, error) {
	card, err := s.Cards.Render(ctx, q, row)
	if err != nil {
		return Card{}, err
	}
	blocked, err := s.Cards.EffectiveBlocked(ctx, q, row)
	if err != nil {
		return Card{}, err
	}
	reserved, err := s.Cards.Reserved(ctx, q, row.Tenant, row.ID)
	if err != nil {
		return Card{}, err
	}
	limit := int64(0)
	if row.MaxSpendPerTransaction != nil {
		limit = *row.MaxSpendPerTransaction
	}
	expires := time.Date(row.ExpYear, time.Month(row.ExpMonth)+1, 1, 0, 0, 0, 0, time.UTC)
	return Card{Card: card, AgentID: row.AgentID, AgentCardKind: row.AgentKind, EffectiveBlockedMccs: blocked,
		SpendLimit: SpendLimit{Amount: limit, Duration: "TRANSACTION"}, ReservedAmount: reserved, ExpiresAt: expires}, nil
}

// purchaseOf renders a PURCHASE_CARD action's request and card.
func (s *Service) purchaseOf(ctx context.Context, q store.Q, a store.AgentAction, out *Action) error {
	var d purchaseDetails
	if err := json.Unmarshal(a.Details, &d); err != nil {
		return err
	}
	out.PurchaseCard = &d.PurchaseCard
	if d.CardID == "" || s.Cards == nil {
		return nil
	}
	row, err := q.GetCard(ctx, a.Tenant, d.CardID, false)
	if err != nil {
		return err
	}
	v, err := s.cardView(ctx, q, row)
	out.Card = &v
	return err
}

// GetCard returns one of the agent's cards; any other card is 404
// (R-AGENT-40).
func (s *Service) GetCard(ctx context.Context, c Caller, cardID string) (Card, error) {
	if err := c.Require(PermManageCards); err != nil {
		return Card{}, err
	}
	row, err := s.Cards.AgentCardRow(ctx, s.DB.Read(), c.Agent.Tenant, c.Agent.ID, cardID)
	if err != nil {
		return Card{}, err
	}
	return s.cardView(ctx, s.DB.Read(), row)
}

// ListCards lists the agent's own cards (R-AGENT-40).
func (s *Service) ListCards(ctx context.Context, c Caller, after string, limit int) ([]Card, int, error) {
	if err := c.Require(PermManageCards); err != nil {
		return nil, 0, err
	}
	q := s.DB.Read()
	rows, total, err := q.ListCards(ctx, c.Agent.Tenant, store.CardFilter{CustomerID: c.Agent.CustomerID, AgentID: c.Agent.ID}, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Card, len(rows))
	for i, r := range rows {
		if out[i], err = s.cardView(ctx, q, r); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// cardAfter reads the agent's card back as a wrapper after a change.
func (s *Service) cardAfter(ctx context.Context, c Caller, cardID string, err error) (Card, error) {
	if err != nil {
		return Card{}, err
	}
	row, err := s.Cards.AgentCardRow(ctx, s.DB.Read(), c.Agent.Tenant, c.Agent.ID, cardID)
	if err != nil {
		return Card{}, err
	}
	return s.cardView(ctx, s.DB.Read(), row)
}

// CloseCard closes one of the agent's cards (R-AGENT-42): CLOSED, what it
// holds released, as PATCH status CLOSED does.
func (s *Service) CloseCard(ctx context.Context, c Caller, cardID string) (Card, error) {
	if err := c.Require(PermManageCards); err != nil {
		return Card{}, err
	}
	closed := cards.StatusClosed
	_, err := s.Cards.UpdateAgentCard(ctx, c.Agent.Tenant, c.Agent.ID, cardID, cards.UpdateRequest{Status: &closed},
		func(store.Card) error { return nil })
	return s.cardAfter(ctx, c, cardID, err)
}
