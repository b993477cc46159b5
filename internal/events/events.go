// Package events records what happened, for webhooks and for the events API.
// Emit writes to the outbox inside the caller's transaction: the event
// commits with the change that causes it, or not at all.
package events

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Envelope is what a webhook receiver gets (Part B "Events").
type Envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Emit records an event of typ about the resource resourceID; data is the full
// resource as it is at this moment (it is encoded now, inside tx).
//
// Besides the event it queues the event's webhook delivery, in the same
// transaction: the delivery row is the durable work item the webhook workers
// lease, retry and finish (docs/architecture-webhooks.md explains why a queue
// row rather than a cursor over the events table).
func Emit(ctx context.Context, tx *store.Tx, t store.Tenant, typ, resourceID string, data any) (Envelope, error) {
	return emit(tx, t, typ, resourceID, data, "", time.Time{})
}

// EmitLeased is Emit for an event its caller delivers itself once the
// transaction commits (the sandbox test webhook): the delivery is written
// leased to token until until, so no webhook worker takes it meanwhile.
func EmitLeased(ctx context.Context, tx *store.Tx, t store.Tenant, typ, resourceID string, data any,
	token string, until time.Time) (Envelope, error) {
	return emit(tx, t, typ, resourceID, data, token, until)
}

func emit(tx *store.Tx, t store.Tenant, typ, resourceID string, data any, token string, until time.Time) (Envelope, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Envelope{}, err
	}
	env := Envelope{ID: id.New(id.Event), Type: typ, Timestamp: tx.Now().UTC().Truncate(time.Microsecond), Data: raw}
	b, err := env.encode()
	if err != nil {
		return Envelope{}, err
	}
	// Queued: the transaction writes its events together just before it
	// commits (store/outbox.go).
	return env, tx.QueueEvent(store.Event{ID: env.ID, Tenant: t, Type: typ, ResourceID: resourceID,
		Envelope: b, CreatedAt: env.Timestamp, LeaseToken: token, LeaseUntil: until})
}

// encode is json.Marshal(e) without a second pass over Data: marshalling a
// json.RawMessage validates and compacts it again, which was most of Emit's
// cost for a transaction's data (json.Marshal output is compact already).
func (e Envelope) encode() ([]byte, error) {
	head, err := json.Marshal(struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
	}{e.ID, e.Type, e.Timestamp})
	if err != nil {
		return nil, err
	}
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	b := make([]byte, 0, len(head)+len(data)+9)
	b = append(b, head[:len(head)-1]...)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}'), nil
}
