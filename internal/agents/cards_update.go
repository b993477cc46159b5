package agents

import (
	"context"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
)

// CardUpdate is the body of PATCH /agents/me/cards/{cardId}: what an agent
// may change on its card. Limits and lists: omitted keeps, a value sets,
// null clears (which only ever loosens, so it is refused when set).
type CardUpdate struct {
	Status                 *string                  `json:"status"`
	MaxSpendPerTransaction jsonx.Optional[int64]    `json:"maxSpendPerTransaction"`
	MaxSpendPerDay         jsonx.Optional[int64]    `json:"maxSpendPerDay"`
	MaxTransactionsPerDay  jsonx.Optional[int64]    `json:"maxTransactionsPerDay"`
	AllowedMccs            jsonx.Optional[[]string] `json:"allowedMccs"`
	BlockedMccs            jsonx.Optional[[]string] `json:"blockedMccs"`
}

// request is the card update it asks the cards capability for.
func (u CardUpdate) request() cards.UpdateRequest {
	return cards.UpdateRequest{Status: u.Status, MaxSpendPerTransaction: u.MaxSpendPerTransaction,
		MaxSpendPerDay: u.MaxSpendPerDay, MaxTransactionsPerDay: u.MaxTransactionsPerDay,
		AllowedMccs: u.AllowedMccs, BlockedMccs: u.BlockedMccs}
}

// Validate checks the request on its own (the cards capability's checks).
func (u CardUpdate) Validate() error {
	r := u.request()
	return r.Validate()
}

// loosening is a refused agent change: 403 naming the field.
func loosening(field, why string) error {
	err := apierr.Forbidden("An agent can only tighten its card's limits or categories, or freeze it: " + field + " " + why +
		"; nothing was changed")
	err.Details = map[string]any{"field": field}
	return err
}

// tighten refuses an update that loosens the card as it stands
// (R-AGENT-41): a higher or removed limit, an allow list that admits more,
// a block list that blocks less, or any status but FROZEN or CLOSED.
func (u CardUpdate) tighten(c store.Card) error {
	if u.Status != nil && *u.Status != cards.StatusFrozen && *u.Status != cards.StatusClosed {
		return loosening("status", "cannot be "+*u.Status+" (an agent never unfreezes)")
	}
	for _, l := range []struct {
		field string
		o     jsonx.Optional[int64]
		cur   *int64
	}{
		{"maxSpendPerTransaction", u.MaxSpendPerTransaction, c.MaxSpendPerTransaction},
		{"maxSpendPerDay", u.MaxSpendPerDay, c.MaxSpendPerDay},
		{"maxTransactionsPerDay", u.MaxTransactionsPerDay, c.MaxTransactionsPerDay},
	} {
		switch {
		case !l.o.Set:
		case l.o.Null && l.cur != nil:
			return loosening(l.field, "cannot be removed")
		case !l.o.Null && l.cur != nil && l.o.Value > *l.cur:
			return loosening(l.field, "cannot be raised")
		}
	}
	if a := u.AllowedMccs; a.Set && len(c.AllowedMCCs) > 0 {
		if len(a.Value) == 0 || slices.ContainsFunc(a.Value, func(m string) bool { return !slices.Contains(c.AllowedMCCs, m) }) {
			return loosening("allowedMccs", "can only drop codes from the card's allow list")
		}
	}
	if b := u.BlockedMccs; b.Set && slices.ContainsFunc(c.BlockedMCCs, func(m string) bool { return !slices.Contains(b.Value, m) }) {
		return loosening("blockedMccs", "must keep every code the card blocks")
	}
	return nil
}

// UpdateCard tightens one of the agent's cards or freezes it; anything that
// loosens it is refused with nothing changed (R-AGENT-41).
func (s *Service) UpdateCard(ctx context.Context, c Caller, cardID string, u CardUpdate) (Card, error) {
	if err := c.Require(PermManageCards); err != nil {
		return Card{}, err
	}
	if err := u.Validate(); err != nil {
		return Card{}, err
	}
	_, err := s.Cards.UpdateAgentCard(ctx, c.Agent.Tenant, c.Agent.ID, cardID, u.request(), u.tighten)
	return s.cardAfter(ctx, c, cardID, err)
}

// Audit actions and actors of agent card data (R-AGENT-43).
const (
	AuditReveal     = "REVEAL"
	AuditActorAgent = "AGENT"
)

// AuditEntry is one audited use of a card's data.
type AuditEntry struct {
	ID        string     `json:"id"`
	CardID    string     `json:"cardId"`
	ActorType string     `json:"actorType"`
	ActorID   string     `json:"actorId"`
	Action    string     `json:"action"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
}

// Reveal hands the agent a reveal URL of one of its cards, minted by mint
// (the hosted reveal page's signed single-use URL), and records the audit
// entry with the agent as actor before the URL is returned (R-AGENT-43).
func (s *Service) Reveal(ctx context.Context, c Caller, cardID string,
	mint func(card cards.Card) (string, time.Time, error)) (string, time.Time, error) {
	if err := c.Require(PermManageCards); err != nil {
		return "", time.Time{}, err
	}
	row, err := s.Cards.AgentCardRow(ctx, s.DB.Read(), c.Agent.Tenant, c.Agent.ID, cardID)
	if err != nil {
		return "", time.Time{}, err
	}
	card, err := s.Cards.Render(ctx, s.DB.Read(), row)
	if err != nil {
		return "", time.Time{}, err
	}
	url, expires, err := mint(card)
	if err != nil {
		return "", time.Time{}, err
	}
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		exp := expires.UTC().Truncate(time.Microsecond)
		return tx.InsertAgentCardAudit(ctx, store.AgentCardAudit{ID: id.New(id.AgentCardAudit), Tenant: c.Agent.Tenant,
			CardID: row.ID, ActorType: AuditActorAgent, ActorID: c.Agent.ID, Action: AuditReveal, ExpiresAt: &exp,
			CreatedAt: tx.Now().UTC().Truncate(time.Microsecond)})
	})
	return url, expires, err
}

// CardAudit lists the audit entries of a card of the tenant, oldest first.
func (s *Service) CardAudit(ctx context.Context, t store.Tenant, cardID string) ([]AuditEntry, error) {
	rows, err := s.DB.Read().AgentCardAudits(ctx, t, cardID)
	if err != nil {
		return nil, err
	}
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = AuditEntry{ID: r.ID, CardID: r.CardID, ActorType: r.ActorType, ActorID: r.ActorID, Action: r.Action,
			ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt}
	}
	return out, nil
}
