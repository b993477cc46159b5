package cards

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Background work of the issuance runner.
const (
	issuanceBatch = 8
	issuanceLease = 30 * time.Second
	pollInterval  = 250 * time.Millisecond
)

// Run does the cards' background work until ctx ends: it applies the card
// network's queued messages, provisions due PROCESSING cards with the issuer
// and expires due authorizations. Every node may run it; claims in the
// database share the work.
func (s *Service) Run(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := s.RunDue(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("card work", "error", err.Error())
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(pollInterval):
		}
	}
}

// RunDue does the work due now and returns how much it did.
func (s *Service) RunDue(ctx context.Context) (int, error) {
	k, err0 := s.ApplyDueMessages(ctx)
	n, err := s.provisionDue(ctx)
	m, err2 := s.expireDue(ctx)
	return k + n + m, errors.Join(err0, err, err2)
}

// provisionDue asks the issuer about each claimed PROCESSING card and applies
// its answer. A failed call leaves the card PROCESSING, asked again after a
// backoff.
func (s *Service) provisionDue(ctx context.Context) (int, error) {
	due, err := s.DB.ClaimDueCardProvisioning(ctx, issuanceLease, issuanceBatch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	for _, c := range due {
		res, err := s.Issuer.Provision(ctx, ProvisionRequest{CardID: c.ID, Env: c.Tenant.Env, CustomerID: c.CustomerID,
			PlatformCardID: c.PlatformCardID, Currency: c.Currency, Last4: c.Last4, Attempt: c.ProvisionAttempts})
		if err != nil {
			s.Log.Warn("card issuer call failed; will retry", "card_id", c.ID, "attempt", c.ProvisionAttempts, "error", err.Error())
			err = s.retryLater(ctx, c)
		} else {
			err = s.provisioned(ctx, c, res)
		}
		if err != nil && ctx.Err() == nil {
			s.Log.Error("card provisioning", "card_id", c.ID, "error", err.Error())
		}
	}
	return len(due), nil
}

// claimed reads the card back locked and reports whether the claim still
// holds: PROCESSING with the due time this worker set.
func claimed(ctx context.Context, tx *store.Tx, c store.Card) (store.Card, bool, error) {
	cur, err := tx.GetCard(ctx, c.Tenant, c.ID, true)
	if err != nil {
		return cur, false, err
	}
	ok := cur.Status == StatusProcessing && cur.ProvisionDueAt != nil && c.ProvisionDueAt != nil &&
		cur.ProvisionDueAt.Equal(*c.ProvisionDueAt)
	return cur, ok, nil
}

// retryLater puts the card's next issuer call after a backoff.
func (s *Service) retryLater(ctx context.Context, c store.Card) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, ok, err := claimed(ctx, tx, c)
		if err != nil || !ok {
			return err
		}
		backoff := min(s.Issuer.Delay()<<min(cur.ProvisionAttempts, 12), 10*time.Minute)
		at := now(tx).Add(backoff)
		cur.ProvisionDueAt = &at
		return tx.UpdateCard(ctx, cur)
	})
}

// provisioned applies the issuer's answer: ACTIVE, PENDING_AUTH when a
// wallet funds it without a delegated key, or CLOSED(ISSUER_REJECTED)
// (R-CARD-06..08).
func (s *Service) provisioned(ctx context.Context, c store.Card, res ProvisionResult) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, ok, err := claimed(ctx, tx, c)
		if err != nil || !ok {
			return err
		}
		if !res.Approved {
			_, err = s.move(ctx, tx, &cur, TriggerIssuerRejected)
			return err
		}
		cur.IssuerRef, cur.ProcessorRef = res.IssuerRef, res.ProcessorRef
		usable, err := fundingUsable(ctx, tx.Q, cur.Tenant, cur)
		if err != nil {
			return err
		}
		trigger := TriggerProvisioned
		if !usable {
			trigger = TriggerProvisionedWithoutKey
		}
		_, err = s.move(ctx, tx, &cur, trigger)
		return err
	})
}
