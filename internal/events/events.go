// Package events records what happened, for webhooks and for the events API.
// Emit writes to the outbox inside the caller's transaction: the event
// commits with the change that causes it, or not at all.
package events

import (
	"context"
	"encoding/json"
	"fmt"
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
	// The id is stamped with the event's own time, so the id index bounds
	// GET /events' time filters (store.ListEvents, id.Window).
	now := tx.Now().UTC().Truncate(time.Microsecond)
	env := Envelope{ID: id.At(id.Event, now), Type: typ, Timestamp: now, Data: raw}
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
// The head is appended by hand, not marshalled through reflection.
func (e Envelope) encode() ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	b := make([]byte, 0, len(e.ID)+len(e.Type)+len(data)+72)
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, e.Type)
	b = append(b, `,"timestamp":"`...)
	b, err := e.Timestamp.AppendText(b) // time.Time's MarshalJSON, unquoted
	if err != nil {
		return nil, fmt.Errorf("events: timestamp: %w", err)
	}
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, '}'), nil
}

// appendJSONString appends s as json.Marshal quotes it: as is when every
// byte is printable ASCII that it does not escape (ids and event types
// are), else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
