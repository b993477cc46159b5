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

// finished is an attempt that is over and not yet recorded.
type finished struct {
	claim store.Claim
	out   outcome
	final bool // not retried (the sandbox test webhook): FAILED unless delivered
}

// recorded is what became of a finished attempt.
type recorded struct {
	next store.DeliveryOutcome
	lost bool // the lease had been lost: the attempt is kept, its outcome discarded
}

// record stores attempts and moves their deliveries on, all in one
// transaction, so that a batch costs one commit: DELIVERED on 2xx, SKIPPED
// without an endpoint, otherwise PENDING again at the next backoff step, or
// FAILED when the window is over (or at once when final). Each delivery
// moves only while its claim's lease holds; an outcome whose lease was lost
// is still recorded as an attempt but decides nothing, and the others in
// the batch are unaffected. An attempt goes in with the UPDATE of its
// delivery, as the row's last attempt, and only the one the row held
// before becomes a row of webhook_attempts (store.FinishDeliveries): a
// delivery that succeeds first time writes no attempt row.
//
// ended names the journal rows (store.Claim.Journal) whose last outcomes
// are in batch: they are deleted in the same transaction.
func record(ctx context.Context, db *store.DB, b Backoff, batch []finished, ended []string) ([]recorded, error) {
	// Ids made once, so that a retried transaction writes the same rows.
	attempts := make([]store.Attempt, len(batch))
	for i, f := range batch {
		o := f.out
		attempts[i] = store.Attempt{
			ID: id.New(attemptIDPrefix), EventID: f.claim.EventID, Tenant: f.claim.Tenant,
			AttemptedAt: o.At.Truncate(time.Microsecond), URL: o.URL, StatusCode: o.Status,
			LatencyMS: o.Latency.Milliseconds(), ResponseExcerpt: o.Excerpt, Error: o.Err, PeerPublic: o.PeerPublic,
		}
	}
	var out []recorded
	held := make([]bool, len(batch))
	// In a group commit the outcomes share the transfers' commit instead of
	// taking a commit of their own (on SQLite, the one writer's), and on
	// PostgreSQL their statements go out in the commit's round trip: which
	// leases held is known once the batch has committed. The statements
	// must not be cancelled part way (they share a transaction with other
	// callers); ctx bounds only the wait for a place in it.
	stmtCtx := context.WithoutCancel(ctx)
	err := db.InBatchTx(ctx, func(tx *store.Tx) error {
		now := tx.Now().UTC()
		out = make([]recorded, len(batch))
		fs := make([]store.Finish, len(batch))
		for i, f := range batch {
			out[i].next = nextState(b, f, now)
			fs[i] = store.Finish{EventID: f.claim.EventID, Token: f.claim.LeaseToken, Outcome: out[i].next, Attempt: &attempts[i]}
			if f.claim.Journal != "" {
				fs[i].Handed = &batch[i].claim.Delivery
			}
		}
		if err := tx.FinishDeliveriesAtCommit(stmtCtx, fs, held); err != nil {
			return err
		}
		return tx.EndHandoffs(stmtCtx, ended)
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].lost = !held[i]
	}
	return out, nil
}

// nextState is where an attempt that ended at now leaves its delivery.
func nextState(b Backoff, f finished, now time.Time) store.DeliveryOutcome {
	switch {
	case f.out.delivered():
		return store.DeliveryOutcome{State: store.DeliveryDelivered, DeliveredAt: &now}
	case f.out.NoEndpoint:
		return store.DeliveryOutcome{State: store.DeliverySkipped}
	case f.final:
		return store.DeliveryOutcome{State: store.DeliveryFailed}
	}
	at, ok := b.Next(f.claim.WindowStart, now, f.claim.Attempts, f.out.RetryAfter, rand.Float64())
	if !ok {
		return store.DeliveryOutcome{State: store.DeliveryFailed}
	}
	return store.DeliveryOutcome{State: store.DeliveryPending, NextAttemptAt: at}
}

// recordOne records a single attempt now (the sandbox test webhook).
func recordOne(ctx context.Context, db *store.DB, b Backoff, f finished) error {
	results, err := record(ctx, db, b, []finished{f}, nil)
	if err == nil && results[0].lost {
		err = errLeaseLost
	}
	return err
}
