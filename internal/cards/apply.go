package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// The card runner's side of the network: claim the messages due (the first
// queued message of each card), apply each, record the outcome.
const (
	messageBatch = 16
	// messageLease is how long a claimed message is the claimer's: a
	// runner that dies holding one leaves it to be claimed again then.
	messageLease = 30 * time.Second
	// maxMessageAttempts: a message whose application keeps failing on
	// something other than a refusal (the database) is FAILED after so
	// many claims, so it does not hold its card's queue forever.
	maxMessageAttempts = 10
)

// ApplyDueMessages applies the card network messages due now and returns
// how many it claimed.
func (s *Service) ApplyDueMessages(ctx context.Context) (int, error) {
	due, err := s.DB.ClaimDueCardMessages(ctx, messageLease, messageBatch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var errs []error
	for _, m := range due {
		errs = append(errs, s.applyMessage(ctx, m))
	}
	return len(due), errors.Join(errs...)
}

// applyMessage applies one claimed message in one transaction. A refusal
// (an API error: the card transaction cannot take it now) rolls the effect
// back and marks the message FAILED; another error leaves it PENDING for a
// later claim, up to maxMessageAttempts.
func (s *Service) applyMessage(ctx context.Context, m store.CardMessage) error {
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, cur, ok, err := claimedMessage(ctx, tx, m)
		if err != nil || !ok {
			return err
		}
		if err := s.effect(ctx, tx, c, cur); err != nil {
			return err
		}
		at := now(tx)
		cur.Status, cur.AppliedAt = store.CardMessageApplied, &at
		return tx.FinishCardMessage(ctx, cur)
	})
	if e, ok := apierr.From(err); ok {
		return s.failMessage(ctx, m, e.Code, e.Reason)
	}
	if err != nil && m.Attempts >= maxMessageAttempts && ctx.Err() == nil {
		s.Log.Error("card network message failed for good", "message_id", m.ID, "card_id", m.CardID, "error", err.Error())
		return errors.Join(err, s.failMessage(ctx, m, "INTERNAL_ERROR", "The message could not be applied"))
	}
	return err
}

// claimedMessage locks the card, then reads the message back locked, and
// reports whether this claim still holds: PENDING under the lease it took.
func claimedMessage(ctx context.Context, tx *store.Tx, m store.CardMessage) (store.Card, store.CardMessage, bool, error) {
	c, err := tx.GetCard(ctx, m.Tenant, m.CardID, true)
	if err != nil {
		return c, m, false, err
	}
	cur, err := tx.GetCardMessage(ctx, m.Tenant, m.CardID, m.ID, true)
	if err != nil {
		return c, cur, false, err
	}
	ok := cur.Status == store.CardMessagePending && cur.LeaseUntil != nil && m.LeaseUntil != nil &&
		cur.LeaseUntil.Equal(*m.LeaseUntil)
	return c, cur, ok, nil
}

// failMessage records a refusal: the message is FAILED with its code and
// reason; nothing else changes.
func (s *Service) failMessage(ctx context.Context, m store.CardMessage, code, reason string) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		_, cur, ok, err := claimedMessage(ctx, tx, m)
		if err != nil || !ok {
			return err
		}
		at := now(tx)
		cur.Status, cur.FailureCode, cur.FailureMessage, cur.AppliedAt = store.CardMessageFailed, code, reason, &at
		s.Log.Info("card network message refused", "message_id", m.ID, "card_id", m.CardID, "type", m.Kind, "code", code)
		return tx.FinishCardMessage(ctx, cur)
	})
}

// effect applies a message to its locked card.
func (s *Service) effect(ctx context.Context, tx *store.Tx, c store.Card, m store.CardMessage) error {
	if kind, ok := authOps[m.Kind]; ok {
		var req SimAuthorization
		if err := json.Unmarshal(m.Body, &req); err != nil {
			return fmt.Errorf("cards: message %s: %w", m.ID, err)
		}
		_, err := s.authorize(ctx, tx, c, kind, req, m.TransactionID)
		return err
	}
	o, ok := txOps[m.Kind]
	if !ok {
		return fmt.Errorf("cards: message %s of unknown type %q", m.ID, m.Kind)
	}
	var req SimOnTransaction
	if err := json.Unmarshal(m.Body, &req); err != nil {
		return fmt.Errorf("cards: message %s: %w", m.ID, err)
	}
	ct, err := loadTx(ctx, tx, c, *req.CardTransactionID)
	if err != nil {
		return err
	}
	if err := o.check(ct, req); err != nil {
		return err
	}
	return o.apply(s, ctx, tx, c, &ct, req, m.TransactionID)
}
