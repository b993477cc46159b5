package cards

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// DefaultMaxLiveCards is a platform's live-card maximum per environment
// unless Service.MaxLiveCards says otherwise (paymentsd --max-live-cards);
// MaxLiveCardsCeiling bounds what may be configured.
const (
	DefaultMaxLiveCards = 10_000
	MaxLiveCardsCeiling = 100_000_000
)

// Service implements the card rules.
type Service struct {
	DB     *store.DB
	Issuer Issuer
	// MaxLiveCards caps a tenant's cards that are not CLOSED (R-CARD-04).
	MaxLiveCards int
	// PINStatus, when set (package carddata), gives a card's pinStatus and
	// pinUnblockAvailableAt for its rendering.
	PINStatus func(ctx context.Context, q store.Q, t store.Tenant, cardID string) (string, *time.Time, error)
	// Ledger moves card money (holds on authorization, postings on
	// clearing); AuthorizationTTL is how long an uncleared authorization
	// holds before it expires (default seven days).
	Ledger           *ledger.Service
	AuthorizationTTL time.Duration
	Log              *slog.Logger
}

// DefaultAuthorizationTTL is how long an authorization holds money unless
// cleared or reversed.
const DefaultAuthorizationTTL = 7 * 24 * time.Hour

func (s *Service) ledger() *ledger.Service { return s.Ledger }

// New returns a service over db with the sandbox issuer for sandbox cards
// and a production issuer that refuses (no partner configured).
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{DB: db, Issuer: EnvIssuers{Sandbox: SandboxIssuer{}, Production: ProductionIssuer{}},
		MaxLiveCards: DefaultMaxLiveCards, Ledger: accounts.NewLedger(db), AuthorizationTTL: DefaultAuthorizationTTL, Log: log}
}

func notFound(cardID string) error { return apierr.NotFound("NOT_FOUND", "Card "+cardID) }

func now(tx *store.Tx) time.Time { return tx.Now().UTC().Truncate(time.Microsecond) }

// render shows a card as the API does.
func (s *Service) render(ctx context.Context, q store.Q, c store.Card) (Card, error) {
	p := Programs[c.Currency]
	out := Card{ID: c.ID, CustomerID: c.CustomerID, Status: c.Status, Form: c.Form,
		MaxSpendPerTransaction: c.MaxSpendPerTransaction, MaxSpendPerDay: c.MaxSpendPerDay,
		MaxTransactionsPerDay: c.MaxTransactionsPerDay, PlatformCardID: c.PlatformCardID, Brand: c.Brand,
		Last4: c.Last4, ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, Currency: c.Currency, ProcessorRef: c.ProcessorRef,
		IssuerRef: c.IssuerRef, CardCapabilities: p.Capabilities, AllowedMccs: c.AllowedMCCs, BlockedMccs: c.BlockedMCCs,
		AgentID: c.AgentID, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.StatusReason != "" {
		out.StatusReason = &c.StatusReason
	}
	if c.FundingSource != "" {
		out.FundingSource = &c.FundingSource
	}
	if s.PINStatus != nil {
		var err error
		if out.PinStatus, out.PinUnblockAvailableAt, err = s.PINStatus(ctx, q, c.Tenant, c.ID); err != nil {
			return Card{}, err
		}
	}
	return out, nil
}

// Get returns a card of the tenant (R-CARD-30).
func (s *Service) Get(ctx context.Context, t store.Tenant, cardID string) (Card, error) {
	if !id.Valid(id.Card, cardID) {
		return Card{}, notFound(cardID)
	}
	q := s.DB.Read()
	c, err := q.GetCard(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Card{}, notFound(cardID)
	}
	if err != nil {
		return Card{}, err
	}
	return s.render(ctx, q, c)
}

// List returns a page of the tenant's cards (R-CARD-29).
func (s *Service) List(ctx context.Context, t store.Tenant, f store.CardFilter, after string, limit int) ([]Card, int, error) {
	q := s.DB.Read()
	rows, total, err := q.ListCards(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Card, len(rows))
	for i, c := range rows {
		if out[i], err = s.render(ctx, q, c); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// SensitiveData returns a card's number and expiry with its status and
// cardholder. Only package carddata (reveal, PIN, tokenization) may call
// it; nothing it returns may be logged or put in a response other than
// carddata's hosted pages and encrypted payloads.
func (s *Service) SensitiveData(ctx context.Context, t store.Tenant, cardID string) (Sensitive, error) {
	if !id.Valid(id.Card, cardID) {
		return Sensitive{}, notFound(cardID)
	}
	q := s.DB.Read()
	c, err := q.GetCard(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Sensitive{}, notFound(cardID)
	}
	if err != nil {
		return Sensitive{}, err
	}
	pan, err := q.CardPAN(ctx, t, cardID)
	if err != nil {
		return Sensitive{}, err
	}
	return Sensitive{PAN: pan, ExpiryMonth: c.ExpMonth, ExpiryYear: c.ExpYear, Status: c.Status, CustomerID: c.CustomerID}, nil
}

// move applies the table's transition from c's status on trigger, or
// returns false when there is none. It writes the card and emits
// card.status_change with the card (R-CARD-09).
func (s *Service) move(ctx context.Context, tx *store.Tx, c *store.Card, trigger string) (bool, error) {
	tr, ok := next(c.Status, trigger)
	if !ok {
		return false, nil
	}
	c.Status, c.StatusReason, c.UpdatedAt = tr.To, tr.Reason, now(tx)
	if tr.To != StatusProcessing {
		c.ProvisionDueAt = nil
	}
	if tr.To == StatusClosed && tr.Reason == ReasonClosedByPlatform {
		c.FundingSource, c.FundingBindingID = "", ""
	}
	if err := tx.UpdateCard(ctx, *c); err != nil {
		return false, err
	}
	out, err := s.render(ctx, tx.Q, *c)
	if err != nil {
		return false, err
	}
	_, err = events.Emit(ctx, tx, c.Tenant, events.CardStatusChange, c.ID, out)
	return true, err
}

// idempotentRecord stores the issued card as the replay of POST /cards in
// the card's transaction (R-IDEM-04).
func idempotentRecord(ctx context.Context, tx *store.Tx, out Card) error {
	return idempotency.Record(ctx, tx, out)
}
