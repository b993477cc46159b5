package cards

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

func invalidTransition(from, to string) error {
	return apierr.Newf("INVALID_STATE_TRANSITION", "A %s card cannot be moved to %s", from, to)
}

// Update applies PATCH /cards/{id}: limits, MCC lists and funding first,
// then the requested status through the transition table, then the system
// transitions a funding change causes (R-CARD-11..24, R-CARD-31..37). It
// answers the card at once: no signed retry.
func (s *Service) Update(ctx context.Context, t store.Tenant, cardID string, req UpdateRequest) (Card, error) {
	if err := req.Validate(); err != nil {
		return Card{}, err
	}
	if !id.Valid(id.Card, cardID) {
		return Card{}, notFound(cardID)
	}
	if err := s.staticPassword(ctx, t, cardID, req); err != nil {
		return Card{}, err
	}
	var out Card
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.GetCard(ctx, t, cardID, true)
		if errors.Is(err, store.ErrNotFound) {
			return notFound(cardID)
		}
		if err != nil {
			return err
		}
		if err := s.update(ctx, tx, &c, req); err != nil {
			return err
		}
		out, err = s.render(ctx, tx.Q, c)
		return err
	})
	return out, err
}

func (s *Service) update(ctx context.Context, tx *store.Tx, c *store.Card, req UpdateRequest) error {
	if c.Status == StatusClosed {
		if req.Status != nil && *req.Status == StatusClosed {
			return apierr.New("CARD_ALREADY_CLOSED", "The card is already closed")
		}
		return apierr.New("CARD_NOT_MUTABLE", "The card is closed: closed cards cannot be changed")
	}
	p := Programs[c.Currency]
	if err := checkUpdate(p, req); err != nil {
		return err
	}
	fundingChanged, err := s.applyFields(ctx, tx, c, req)
	if err != nil {
		return err
	}
	if req.Status != nil {
		return s.requestStatus(ctx, tx, c, *req.Status)
	}
	if fundingChanged {
		return s.followFunding(ctx, tx, c)
	}
	return nil
}

// checkUpdate: limits need their capability flags (R-CARD-33); on programs
// where the issuer decides, funding cannot accompany a status change
// (R-CARD-36) and a static 3-D Secure password needs its flag.
func checkUpdate(p Program, req UpdateRequest) error {
	var f apierr.Fields
	c := p.Capabilities
	need := func(field string, set, flag bool, name string) {
		if set && !flag {
			f.Add(field, apierr.AdditionalProperties, "is not supported by %s cards (cardCapabilities.%s is false)", p.Currency, name)
		}
	}
	need("maxSpendPerTransaction", req.MaxSpendPerTransaction.Set, c.SupportsSpendLimits, "supportsSpendLimits")
	need("maxSpendPerDay", req.MaxSpendPerDay.Set, c.SupportsSpendLimits, "supportsSpendLimits")
	need("maxTransactionsPerDay", req.MaxTransactionsPerDay.Set, c.SupportsTransactionCountLimit, "supportsTransactionCountLimit")
	need("allowedMccs", req.AllowedMccs.Set, !p.IssuerDecides, "supportsSpendLimits")
	need("blockedMccs", req.BlockedMccs.Set, !p.IssuerDecides, "supportsSpendLimits")
	need("threeDSecurePassword", req.ThreeDSecurePassword != nil, c.Supports3dSecurePassword, "supports3dSecurePassword")
	if p.IssuerDecides && req.Status != nil && req.FundingSource != nil {
		f.Add("fundingSource", apierr.AdditionalProperties, "cannot accompany a status change on %s cards, whose issuer decides authorizations", p.Currency)
	}
	return f.Err()
}

// applyFields sets limits, lists and funding on c and writes it; it reports
// whether the funding source changed (which fires no webhook, R-CARD-10).
func (s *Service) applyFields(ctx context.Context, tx *store.Tx, c *store.Card, req UpdateRequest) (bool, error) {
	if req.MaxSpendPerTransaction.Set {
		c.MaxSpendPerTransaction = req.MaxSpendPerTransaction.Ptr()
	}
	if req.MaxSpendPerDay.Set {
		c.MaxSpendPerDay = req.MaxSpendPerDay.Ptr()
	}
	if req.MaxTransactionsPerDay.Set {
		c.MaxTransactionsPerDay = req.MaxTransactionsPerDay.Ptr()
	}
	if req.AllowedMccs.Set {
		c.AllowedMCCs = orEmpty(req.AllowedMccs.Value)
	}
	if req.BlockedMccs.Set {
		c.BlockedMCCs = orEmpty(req.BlockedMccs.Value)
	}
	changed := false
	if req.FundingSource != nil && *req.FundingSource != c.FundingSource {
		a, _, err := s.fundingAccount(ctx, tx.Q, c.Tenant, c.CustomerID, *req.FundingSource, c.Currency)
		if err != nil {
			return false, err
		}
		c.FundingSource, c.FundingBindingID, changed = a.ID, id.New(id.CardFundingSource), true
	}
	c.UpdatedAt = now(tx)
	return changed, tx.UpdateCard(ctx, *c)
}

// requestStatus moves c as PATCH status asks, through the table; a move
// that needs usable funding is refused without it (R-CARD-14).
func (s *Service) requestStatus(ctx context.Context, tx *store.Tx, c *store.Card, status string) error {
	trigger := requestTriggers[status]
	tr, ok := next(c.Status, trigger)
	if !ok {
		return invalidTransition(c.Status, status)
	}
	if tr.NeedsUsableFunding {
		usable, err := fundingUsable(ctx, tx.Q, c.Tenant, *c)
		if err != nil {
			return err
		}
		if !usable {
			return apierr.Newf("INVALID_STATE_TRANSITION", "A %s card funded by an embedded wallet needs an active delegated key for the card (POST /auth/delegated-keys) before it can be ACTIVE", c.Status)
		}
	}
	if tr.To == StatusClosed {
		if err := s.reconcileOnClose(ctx, tx, *c); err != nil {
			return err
		}
		// Settling what was open may have closed a SINGLE_USE card already.
		cur, err := tx.GetCard(ctx, c.Tenant, c.ID, true)
		if err != nil {
			return err
		}
		if cur.Status == StatusClosed {
			*c = cur
			return nil
		}
	}
	_, err := s.move(ctx, tx, c, trigger)
	return err
}

// followFunding makes the system transitions of a funding change: an ACTIVE
// card whose funding is no longer usable waits for delegation, a
// PENDING_AUTH card whose funding is usable again is ACTIVE. FROZEN cards
// keep their status (R-CARD-22..24).
func (s *Service) followFunding(ctx context.Context, tx *store.Tx, c *store.Card) error {
	if c.Status != StatusActive && c.Status != StatusPendingAuth {
		return nil
	}
	usable, err := fundingUsable(ctx, tx.Q, c.Tenant, *c)
	if err != nil {
		return err
	}
	switch {
	case c.Status == StatusActive && !usable:
		_, err = s.move(ctx, tx, c, TriggerDelegationLost)
	case c.Status == StatusPendingAuth && usable:
		_, err = s.move(ctx, tx, c, TriggerDelegationRestored)
	}
	return err
}

// staticPassword hands a threeDSecurePassword to the issuer before the rest
// of the update (an outside effect, kept out of the database transaction),
// once the card is known to take one; the password is never stored here.
func (s *Service) staticPassword(ctx context.Context, t store.Tenant, cardID string, req UpdateRequest) error {
	if req.ThreeDSecurePassword == nil {
		return nil
	}
	c, err := s.DB.Read().GetCard(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) {
		return notFound(cardID)
	}
	if err != nil || c.Status == StatusClosed || !Programs[c.Currency].Capabilities.Supports3dSecurePassword {
		return err // the transaction answers CARD_NOT_MUTABLE or the missing capability
	}
	return s.Issuer.SetStaticPassword(ctx, t.Env, cardID, *req.ThreeDSecurePassword)
}
