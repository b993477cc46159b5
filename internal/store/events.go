package store

import (
	"context"
	"time"
)

// Event is one row of the outbox. Envelope is the exact JSON delivered:
// {id, type, timestamp, data}.
type Event struct {
	ID         string
	Tenant     Tenant
	Type       string
	ResourceID string
	Envelope   []byte
	CreatedAt  time.Time
	// LeaseToken, when set, writes the event's delivery row leased to this
	// token until LeaseUntil (attempts 1, as a claim leaves it) instead of
	// offering it to the webhook runner's hand-off: the holder, a request
	// that delivers the event itself (the sandbox test webhook), makes the
	// attempt.
	LeaseToken string
	LeaseUntil time.Time
}

// GetEvent returns one event of the tenant.
func (q Q) GetEvent(ctx context.Context, t Tenant, id string) (Event, error) {
	var e Event
	var env string
	var created int64
	err := q.queryRow(ctx, `SELECT id, type, resource_id, envelope, created_at FROM events
		WHERE platform_id = ? AND env = ? AND id = ?`, t.PlatformID, t.Env, id).
		Scan(&e.ID, &e.Type, &e.ResourceID, &env, &created)
	if err != nil {
		return Event{}, classify(err)
	}
	e.Tenant, e.Envelope, e.CreatedAt = t, []byte(env), fromMicros(created)
	return e, nil
}
