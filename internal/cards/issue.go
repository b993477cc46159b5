package cards

import (
	"context"
	"errors"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// KYC status a cardholder needs (R-CARD-03).
const kycApproved = "APPROVED"

// Account types with their own rules here.
const (
	accountEmbeddedWallet = "EMBEDDED_WALLET"
	delegatedKeyActive    = "ACTIVE"
)

// Issue issues a card: checked, stored PROCESSING with its number sealed,
// announced (card.status_change is for transitions; the issuer's answer
// brings the first), and provisioned later by the issuance runner
// (R-CARD-01, R-CARD-05).
func (s *Service) Issue(ctx context.Context, t store.Tenant, req IssueRequest) (Card, error) {
	if err := req.Validate(); err != nil {
		return Card{}, err
	}
	if err := s.Issuer.Ready(t.Env); err != nil {
		return Card{}, err
	}
	var out Card
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, pan, err := s.newCard(ctx, tx, t, req)
		if err != nil {
			return err
		}
		if err := tx.InsertCard(ctx, row, pan); err != nil {
			return err
		}
		if out, err = s.render(ctx, tx.Q, row); err != nil {
			return err
		}
		return idempotentRecord(ctx, tx, out)
	})
	return out, err
}

// newCard checks the request against the tenant's data and builds the row.
func (s *Service) newCard(ctx context.Context, tx *store.Tx, t store.Tenant, req IssueRequest) (store.Card, string, error) {
	if err := s.checkCardholder(ctx, tx.Q, t, req.customer()); err != nil {
		return store.Card{}, "", err
	}
	acct, p, err := s.fundingAccount(ctx, tx.Q, t, req.customer(), req.fundingSource(), "")
	if err != nil {
		return store.Card{}, "", err
	}
	if err := issuanceLimits(p, req); err != nil {
		return store.Card{}, "", err
	}
	// The tenant's configuration row, locked, serialises issuance per
	// tenant on PostgreSQL, so two concurrent issues cannot both pass the
	// live-card count (SQLite's one writer does that already).
	if _, err := tx.GetPlatformConfig(ctx, t, true); err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Card{}, "", err
	}
	if n, err := tx.CountLiveCards(ctx, t); err != nil {
		return store.Card{}, "", err
	} else if n >= s.MaxLiveCards {
		return store.Card{}, "", apierr.Newf("CARD_LIMIT_REACHED", "The platform has %d live cards, its maximum; close a card to issue another", n)
	}
	pan, err := newPAN(p.BIN)
	if err != nil {
		return store.Card{}, "", err
	}
	at := now(tx)
	due := at.Add(s.Issuer.Delay())
	month, year := expiry(at)
	row := store.Card{ID: id.New(id.Card), Tenant: t, CustomerID: req.customer(), Status: StatusProcessing,
		Form: FormVirtual, Brand: p.Brand, Currency: p.Currency, FundingSource: acct.ID,
		FundingBindingID: id.New(id.CardFundingSource), Last4: pan[len(pan)-4:], ExpMonth: month, ExpYear: year,
		MaxSpendPerTransaction: req.MaxSpendPerTransaction, MaxSpendPerDay: req.MaxSpendPerDay,
		MaxTransactionsPerDay: req.MaxTransactionsPerDay, AllowedMCCs: orEmpty(req.AllowedMccs),
		BlockedMCCs: orEmpty(req.BlockedMccs), ProvisionDueAt: &due, CreatedAt: at, UpdatedAt: at}
	row.PlatformCardID = strings.TrimPrefix(row.ID, id.Card+":")
	if req.PlatformCardID != nil {
		row.PlatformCardID = *req.PlatformCardID
	}
	return row, pan, nil
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// checkCardholder: a live customer of the tenant whose KYC is APPROVED.
func (s *Service) checkCardholder(ctx context.Context, q store.Q, t store.Tenant, customerID string) error {
	c, err := q.GetCustomer(ctx, t, customerID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.DeletedAt != nil) {
		return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+customerID)
	}
	if err != nil {
		return err
	}
	if c.Status != kycApproved {
		return apierr.Newf("CARDHOLDER_KYC_NOT_APPROVED", "The cardholder's KYC status is %s; cards are issued to APPROVED customers only", c.Status)
	}
	return nil
}

// fundingAccount checks that accountID is an active internal account of the
// customer that a card program funds from (and, when currency is given, the
// card's currency), and returns it with its program (R-CARD-34, R-CARD-35).
func (s *Service) fundingAccount(ctx context.Context, q store.Q, t store.Tenant, customerID, accountID, currency string) (store.InternalAccount, Program, error) {
	var f apierr.Fields
	a, err := q.GetInternalAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.CustomerID != customerID) {
		f.Add("fundingSource", apierr.Pattern, "must be an internal account of the card's customer")
		return a, Program{}, f.Err()
	}
	if err != nil {
		return a, Program{}, err
	}
	p, ok := programFor(a.Type, a.Currency)
	switch {
	case !ok:
		f.Add("fundingSource", apierr.Enum, "a %s %s account cannot fund a card: card programs fund from %s", a.Type, a.Currency, fundingList())
	case currency != "" && p.Currency != currency:
		f.Add("fundingSource", apierr.Enum, "must fund %s cards: a %s %s account funds %s cards", currency, a.Type, a.Currency, p.Currency)
	case a.Status != "" && a.Status != "ACTIVE":
		f.Add("fundingSource", apierr.Enum, "the account is %s; only an ACTIVE account can fund a card", a.Status)
	}
	return a, p, f.Err()
}

func fundingList() string {
	var l []string
	for _, c := range []string{"USD", "EUR"} {
		l = append(l, Programs[c].Funding...)
	}
	return strings.Join(l, ", ")
}

// issuanceLimits: limits at issuance need supportsSpendLimitsAtIssuance and
// each its own flag (R-CARD-02).
func issuanceLimits(p Program, req IssueRequest) error {
	var f apierr.Fields
	c := p.Capabilities
	need := func(field string, set, flag bool, name string) {
		if set && !flag {
			f.Add(field, apierr.AdditionalProperties, "is not supported by %s cards (cardCapabilities.%s is false)", p.Currency, name)
		}
	}
	atIssuance := req.MaxSpendPerTransaction != nil || req.MaxSpendPerDay != nil || req.MaxTransactionsPerDay != nil
	need("maxSpendPerTransaction", atIssuance, c.SupportsSpendLimitsAtIssuance, "supportsSpendLimitsAtIssuance")
	need("maxSpendPerTransaction", req.MaxSpendPerTransaction != nil, c.SupportsSpendLimits, "supportsSpendLimits")
	need("maxSpendPerDay", req.MaxSpendPerDay != nil, c.SupportsSpendLimits, "supportsSpendLimits")
	need("maxTransactionsPerDay", req.MaxTransactionsPerDay != nil, c.SupportsTransactionCountLimit, "supportsTransactionCountLimit")
	need("allowedMccs", len(req.AllowedMccs) > 0 && p.IssuerDecides, !p.IssuerDecides, "supportsSpendLimits")
	need("blockedMccs", len(req.BlockedMccs) > 0 && p.IssuerDecides, !p.IssuerDecides, "supportsSpendLimits")
	return f.Err()
}

// fundingUsable reports whether a card's funding may be used: any account
// but an embedded wallet, or a wallet with an ACTIVE delegated key for the
// card (R-CARD-08).
func fundingUsable(ctx context.Context, q store.Q, t store.Tenant, c store.Card) (bool, error) {
	if c.FundingSource == "" {
		return false, nil
	}
	a, err := q.GetInternalAccount(ctx, t, c.FundingSource)
	if err != nil {
		return false, err
	}
	if a.Type != accountEmbeddedWallet {
		return true, nil
	}
	binding := c.FundingBindingID
	if c.AgentID != "" {
		binding = "" // agent keys have no card binding
	}
	keys, err := q.ListDelegatedKeys(ctx, t, a.ID, binding)
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		// A card's own key, or for an agent's card the agent's key on the
		// wallet.
		mine := k.CardID == c.ID || (c.AgentID != "" && k.AgentID == c.AgentID && k.AccountID == a.ID)
		if mine && k.Status == delegatedKeyActive {
			return true, nil
		}
	}
	return false, nil
}
