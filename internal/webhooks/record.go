package webhooks

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// attemptIDPrefix is the id type of a recorded attempt.
const attemptIDPrefix = "WebhookAttempt"

// errLeaseLost: the attempt was recorded, but the delivery had meanwhile
// been taken over by another worker, whose outcome stands.
var errLeaseLost = errors.New("webhooks: lease lost before the outcome was recorded")

// record stores an attempt and moves its delivery on, in one transaction:
// DELIVERED on 2xx, SKIPPED without an endpoint, otherwise PENDING again at
// the next backoff step, or FAILED when the window is over (or at once when
// final, for deliveries that are not retried).
func record(ctx context.Context, db *store.DB, b Backoff, c store.Claim, o outcome, final bool) (store.DeliveryOutcome, error) {
	attempt := store.Attempt{
		ID: id.New(attemptIDPrefix), EventID: c.EventID, Tenant: c.Tenant, AttemptedAt: o.At.Truncate(time.Microsecond),
		URL: o.URL, StatusCode: o.Status, LatencyMS: o.Latency.Milliseconds(), ResponseExcerpt: o.Excerpt, Error: o.Err,
	}
	var next store.DeliveryOutcome
	lost := false
	err := db.InTx(ctx, func(tx *store.Tx) error {
		lost = false
		if err := tx.InsertAttempt(ctx, attempt); err != nil {
			return err
		}
		now := tx.Now().UTC()
		switch {
		case o.delivered():
			next = store.DeliveryOutcome{State: store.DeliveryDelivered, DeliveredAt: &now}
		case o.NoEndpoint:
			next = store.DeliveryOutcome{State: store.DeliverySkipped}
		case final:
			next = store.DeliveryOutcome{State: store.DeliveryFailed}
		default:
			at, ok := b.Next(c.WindowStart, now, c.Attempts, o.RetryAfter, rand.Float64())
			next = store.DeliveryOutcome{State: store.DeliveryPending, NextAttemptAt: at}
			if !ok {
				next = store.DeliveryOutcome{State: store.DeliveryFailed}
			}
		}
		err := tx.FinishDelivery(ctx, c.EventID, c.LeaseToken, next)
		if errors.Is(err, store.ErrNotFound) {
			// Keep the attempt visible; its outcome no longer decides anything.
			lost = true
			return nil
		}
		return err
	})
	if err == nil && lost {
		err = errLeaseLost
	}
	return next, err
}
