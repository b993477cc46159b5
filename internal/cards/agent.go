package cards

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Purchase card kinds of the cards agents issue (R-AGENT-37).
const (
	// AgentSingleUse: the card closes once its one purchase clears; while
	// that purchase is authorized, any other authorization declines.
	AgentSingleUse = "SINGLE_USE"
	// AgentMerchantLocked: the first merchant whose authorization is
	// approved is the only one the card pays from then on.
	AgentMerchantLocked = "MERCHANT_LOCKED"
)

// AgentKinds are the purchase card kinds.
var AgentKinds = []string{AgentSingleUse, AgentMerchantLocked}

// AgentCurrency is the one currency of agents' purchase cards: the USD
// program, whose authorizations this service decides.
const AgentCurrency = "USD"

// AgentDefaultBlockedMCCs are the merchant categories an agent's card never
// pays, whatever its own lists say: money transfer (4829), cash
// disbursements (6010, 6011), quasi-cash including crypto purchases (6051),
// stored-value loads (6540), and gambling and lotteries (7800, 7801, 7802,
// 7995). They are not stored on the card; decisions and
// effectiveBlockedMccs add them.
var AgentDefaultBlockedMCCs = []string{"4829", "6010", "6011", "6051", "6540", "7800", "7801", "7802", "7995"}

// EffectiveBlockedMCCs is what an agent's card blocks: the agent defaults,
// the platform's cardConfigs.agentBlockedMccs and the card's own list,
// sorted, without repeats.
func EffectiveBlockedMCCs(c store.Card, platform []string) []string {
	out := slices.Concat(AgentDefaultBlockedMCCs, platform, c.BlockedMCCs)
	slices.Sort(out)
	return slices.Compact(out)
}

// AgentIssue is a purchase card an agent issues for its customer: funded by
// FundingSource, spending at most Amount per transaction.
type AgentIssue struct {
	AgentID       string
	Kind          string
	CustomerID    string
	FundingSource string
	Amount        int64
}

// CheckAgentIssue checks what issuing r needs before anything is stored or
// sent for approval: the issuer is reachable, the customer is verified
// (CARDHOLDER_KYC_NOT_APPROVED) and the account funds USD cards.
func (s *Service) CheckAgentIssue(ctx context.Context, q store.Q, t store.Tenant, r AgentIssue) error {
	if err := s.Issuer.Ready(t.Env); err != nil {
		return err
	}
	if err := s.checkCardholder(ctx, q, t, r.CustomerID); err != nil {
		return err
	}
	_, _, err := s.fundingAccount(ctx, q, t, r.CustomerID, r.FundingSource, AgentCurrency)
	return renameField(err, "fundingSource", "sourceAccountId")
}

// IssueForAgent issues an agent's purchase card in tx (the transaction of
// the agent's action), through the same checks, row and issuer runner as
// POST /cards: PROCESSING now, provisioned by the card runner. Its
// maxSpendPerTransaction is the purchase amount (spendLimit, TRANSACTION).
func (s *Service) IssueForAgent(ctx context.Context, tx *store.Tx, t store.Tenant, r AgentIssue) (Card, error) {
	if err := s.CheckAgentIssue(ctx, tx.Q, t, r); err != nil {
		return Card{}, err
	}
	amount := r.Amount
	req := IssueRequest{CustomerID: &r.CustomerID, FundingSource: &r.FundingSource, MaxSpendPerTransaction: &amount}
	if err := req.Validate(); err != nil {
		return Card{}, err
	}
	row, pan, err := s.newCard(ctx, tx, t, req)
	if err != nil {
		return Card{}, err
	}
	row.AgentID, row.AgentKind = r.AgentID, r.Kind
	if err := tx.InsertCard(ctx, row, pan); err != nil {
		return Card{}, err
	}
	return s.render(ctx, tx.Q, row)
}

// renameField names a field error by the agent request's field.
func renameField(err error, from, to string) error {
	list := apierr.FieldList(err)
	if len(list) == 0 {
		return err
	}
	var f apierr.Fields
	for _, fe := range list {
		field := fe.Field
		if field == from {
			field = to
		}
		f.Add(field, fe.Constraint, "%s", fe.Message)
	}
	return f.Err()
}

// AgentCardRow reads a card of the tenant with its agent fields; a card the
// agent does not own is 404 (R-AGENT-40).
func (s *Service) AgentCardRow(ctx context.Context, q store.Q, t store.Tenant, agentID, cardID string) (store.Card, error) {
	if !id.Valid(id.Card, cardID) {
		return store.Card{}, notFound(cardID)
	}
	c, err := q.GetCard(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (agentID == "" || c.AgentID != agentID)) {
		return store.Card{}, notFound(cardID)
	}
	return c, err
}

// Render shows a card row as the API does.
func (s *Service) Render(ctx context.Context, q store.Q, c store.Card) (Card, error) {
	return s.render(ctx, q, c)
}

// Reserved is what a card's open authorizations hold, in card units.
func (s *Service) Reserved(ctx context.Context, q store.Q, t store.Tenant, cardID string) (int64, error) {
	auths, err := q.OpenCardAuthorizationsOfCard(ctx, t, cardID)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, a := range auths {
		row, err := q.GetTransaction(ctx, t, a.TransactionID)
		if err != nil {
			return 0, err
		}
		var d transactions.CardDetails
		if err := json.Unmarshal(row.CardDetails, &d); err != nil {
			return 0, err
		}
		sum += d.HeldAmount
	}
	return sum, nil
}

// UpdateAgentCard applies PATCH to an agent's card, with check run first on
// the locked card (the agent's tightening rule, R-AGENT-41), so no
// concurrent change slips between the check and the write.
func (s *Service) UpdateAgentCard(ctx context.Context, t store.Tenant, agentID, cardID string, req UpdateRequest,
	check func(c store.Card) error) (Card, error) {
	if err := req.Validate(); err != nil {
		return Card{}, err
	}
	var out Card
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := s.AgentCardRow(ctx, tx.Q, t, agentID, cardID)
		if err != nil {
			return err
		}
		if c, err = tx.GetCard(ctx, t, cardID, true); err != nil {
			return err
		}
		if c.Status != StatusClosed {
			if err := check(c); err != nil {
				return err
			}
		}
		if err := s.update(ctx, tx, &c, req); err != nil {
			return err
		}
		out, err = s.render(ctx, tx.Q, c)
		return err
	})
	return out, err
}

// agentDecline applies an agent card's own rules to a purchase
// authorization: the effective MCC blocks, one purchase for SINGLE_USE
// (another while it is open declines CARD_NOT_ACTIVE; once it clears the
// card is CLOSED), one merchant for MERCHANT_LOCKED (BLOCKED elsewhere).
// "" lets the decision go on.
func agentDecline(c store.Card, platform []string, descriptor string, mcc *string, openAuths int) string {
	if c.AgentID == "" {
		return ""
	}
	if mcc != nil && slices.Contains(EffectiveBlockedMCCs(c, platform), *mcc) {
		return DeclineBlocked
	}
	switch c.AgentKind {
	case AgentSingleUse:
		if openAuths > 0 {
			return DeclineCardNotActive
		}
	case AgentMerchantLocked:
		if c.LockedMerchant != "" && c.LockedMerchant != descriptor {
			return DeclineBlocked
		}
	}
	return ""
}

// agentRules is agentDecline on the card as stored.
func (s *Service) agentRules(ctx context.Context, tx *store.Tx, c store.Card, r authRequest) (string, error) {
	if c.AgentID == "" {
		return "", nil
	}
	platform, err := platformconfig.AgentBlockedMccs(ctx, tx.Q, c.Tenant)
	if err != nil {
		return "", err
	}
	open, err := tx.OpenCardAuthorizationsOfCard(ctx, c.Tenant, c.ID)
	if err != nil {
		return "", err
	}
	return agentDecline(c, platform, *r.merchant.Descriptor, r.merchant.Mcc, len(open)), nil
}

// lockMerchant keeps a MERCHANT_LOCKED card to the merchant of its first
// approved purchase, in the authorization's transaction.
func lockMerchant(ctx context.Context, tx *store.Tx, c *store.Card, descriptor string) error {
	if c.AgentKind != AgentMerchantLocked || c.LockedMerchant != "" {
		return nil
	}
	c.LockedMerchant = descriptor
	return tx.UpdateCard(ctx, *c)
}

// closeSpent closes an agent's SINGLE_USE card whose purchase cleared, in
// the clearing's transaction (card.status_change CLOSED, SINGLE_USE_SPENT).
func (s *Service) closeSpent(ctx context.Context, tx *store.Tx, t store.Tenant, cardID string) error {
	c, err := tx.GetCard(ctx, t, cardID, true)
	if err != nil || c.AgentKind != AgentSingleUse || c.Status == StatusClosed {
		return err
	}
	_, err = s.move(ctx, tx, &c, TriggerSingleUseSpent)
	return err
}

// EffectiveBlocked is a card's effective MCC blocks as its tenant stands,
// read through q.
func (s *Service) EffectiveBlocked(ctx context.Context, q store.Q, c store.Card) ([]string, error) {
	platform, err := platformconfig.AgentBlockedMccs(ctx, q, c.Tenant)
	if err != nil {
		return nil, err
	}
	return EffectiveBlockedMCCs(c, platform), nil
}
