package store

import (
	"context"
	"errors"
	"strings"
)

// outbox holds the events a write transaction has emitted and not yet
// written. A transfer emits several (created, processing, completed, the
// receiver's), and each was two statements, an event and its delivery row;
// kept here, they are written just before the commit in one statement per
// table, and in a group commit one pair of statements covers every transfer
// of the batch. The rows still commit with the change that caused them, or
// not at all.
type outbox struct{ events []Event }

// outboxChunk bounds the rows of one INSERT (7 parameters each; SQLite
// allows 32766 per statement).
const outboxChunk = 500

// QueueEvent adds an event to the outbox, with its webhook delivery due at
// the event's time. Reads of events or deliveries through the same
// transaction write the queue first, so they see what it emitted.
func (q Q) QueueEvent(e Event) error {
	if q.outbox == nil {
		return errors.New("store: events are queued inside InTx or InBatchTx, which write them before committing")
	}
	q.outbox.events = append(q.outbox.events, e)
	return nil
}

// flushEvents writes the queued events and their deliveries.
func (q Q) flushEvents(ctx context.Context) error {
	if q.outbox == nil || len(q.outbox.events) == 0 {
		return nil
	}
	pending := q.outbox.events
	q.outbox.events = nil
	for len(pending) > 0 {
		n := min(len(pending), outboxChunk)
		if err := q.insertEvents(ctx, pending[:n]); err != nil {
			return err
		}
		pending = pending[n:]
	}
	return nil
}

func (q Q) insertEvents(ctx context.Context, es []Event) error {
	values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", len(es)), ", ")
	args := make([]any, 0, 7*len(es))
	for _, e := range es {
		args = append(args, e.ID, e.Tenant.PlatformID, e.Tenant.Env, e.Type, e.ResourceID, string(e.Envelope), toMicros(e.CreatedAt))
	}
	if _, err := q.exec(ctx, `INSERT INTO events (id, platform_id, env, type, resource_id, envelope, created_at) VALUES `+values, args...); err != nil {
		return err
	}
	values = strings.TrimSuffix(strings.Repeat("(?, ?, ?, 'PENDING', 0, ?, ?, ?), ", len(es)), ", ")
	args = args[:0]
	for _, e := range es {
		at := toMicros(e.CreatedAt)
		args = append(args, e.ID, e.Tenant.PlatformID, e.Tenant.Env, at, at, at)
	}
	_, err := q.exec(ctx, `INSERT INTO webhook_deliveries (event_id, platform_id, env, state, attempts, window_start,
		next_attempt_at, updated_at) VALUES `+values, args...)
	return err
}
