package webhooks

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Service is what the HTTP API calls: the events API (list, get with
// attempts, redeliver), the signing keys, and the sandbox test webhook.
type Service struct {
	db      *store.DB
	send    *sender
	timeout time.Duration
}

// ServiceOptions configure the API side.
type ServiceOptions struct {
	// RequestTimeout bounds the synchronous test delivery (default 10s).
	RequestTimeout time.Duration
	// RootCAs, if set, replaces the system roots for receivers' certificates.
	RootCAs *x509.CertPool
	// Guard decides which addresses the test webhook may reach; nil: a
	// guard of AddressesAuto.
	Guard *Guard
}

// NewService makes the API-side service.
func NewService(db *store.DB, log *slog.Logger, opts ServiceOptions) *Service {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 10 * time.Second
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Guard == nil {
		opts.Guard = NewGuard(db, AddressesAuto)
	}
	return &Service{db: db, send: newSender(db, log, opts.RequestTimeout, opts.Guard, opts.RootCAs, 1), timeout: opts.RequestTimeout}
}

// Event is an event as the events API shows it: the envelope a receiver
// gets, plus what it is about and how its delivery stands.
type Event struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	ResourceID string          `json:"resourceId"`
	Timestamp  time.Time       `json:"timestamp"`
	Data       json.RawMessage `json:"data"`
	Delivery   *DeliveryStatus `json:"delivery,omitempty"`
}

// Delivery statuses shown by the API: the stored states, plus IN_PROGRESS
// for a PENDING delivery whose attempt is running now.
const StatusInProgress = "IN_PROGRESS"

// DeliveryStatus is where an event's webhook delivery stands.
type DeliveryStatus struct {
	Status        string     `json:"status"`
	AttemptCount  int        `json:"attemptCount"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	DeliveredAt   *time.Time `json:"deliveredAt,omitempty"`
}

// EventDetail is one event with its recorded attempts.
type EventDetail struct {
	Event
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one recorded delivery attempt.
type Attempt struct {
	ID              string    `json:"id"`
	AttemptedAt     time.Time `json:"attemptedAt"`
	URL             string    `json:"url"`
	ResponseStatus  *int      `json:"responseStatus,omitempty"`
	LatencyMs       int64     `json:"latencyMs"`
	ResponseExcerpt string    `json:"responseExcerpt,omitempty"`
	Error           string    `json:"error,omitempty"`
}

// maxAttemptsShown bounds the attempts GET /events/{id} lists (the latest).
const maxAttemptsShown = 100

func eventNotFound() error { return apierr.New(apierr.CodeNotFound, "Event not found") }

// ListEvents returns a page of the tenant's events, oldest first.
func (s *Service) ListEvents(ctx context.Context, t store.Tenant, f store.EventFilter, after string, limit int) ([]Event, int, error) {
	rows, total, err := s.db.Read().ListEvents(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		e, err := s.view(r)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, total, nil
}

// GetEvent returns one event with its attempts.
func (s *Service) GetEvent(ctx context.Context, t store.Tenant, eventID string) (EventDetail, error) {
	row, err := s.db.Read().GetEventWithDelivery(ctx, t, eventID)
	if errors.Is(err, store.ErrNotFound) {
		return EventDetail{}, eventNotFound()
	}
	if err != nil {
		return EventDetail{}, err
	}
	e, err := s.view(row)
	if err != nil {
		return EventDetail{}, err
	}
	list, err := s.db.Read().ListAttempts(ctx, t, eventID, maxAttemptsShown)
	if err != nil {
		return EventDetail{}, err
	}
	// A receiver's answer is shown only if the address it came from is
	// allowed now: a body read from an internal address while private
	// addresses were allowed (a laptop install that has since gained a
	// second platform, or an attempt recorded before the address rule) is
	// not echoed once they are not.
	pol, err := s.send.guard.policy(ctx, t.Env)
	if err != nil {
		return EventDetail{}, err
	}
	d := EventDetail{Event: e, Attempts: make([]Attempt, 0, len(list))}
	for _, a := range list {
		v := Attempt{ID: a.ID, AttemptedAt: a.AttemptedAt, URL: a.URL, LatencyMs: a.LatencyMS,
			ResponseExcerpt: a.ResponseExcerpt, Error: a.Error}
		if pol.publicOnly && !a.PeerPublic {
			v.ResponseExcerpt = ""
		}
		if a.StatusCode != 0 {
			v.ResponseStatus = &a.StatusCode
		}
		d.Attempts = append(d.Attempts, v)
	}
	return d, nil
}

// Redeliver queues the event again, due now, with a fresh retry window. The
// receiver gets the same webhook-id and body as before.
func (s *Service) Redeliver(ctx context.Context, t store.Tenant, eventID string) (EventDetail, error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetEvent(ctx, t, eventID); err != nil {
			return err
		}
		return tx.RestartDelivery(ctx, t, eventID)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return EventDetail{}, eventNotFound()
	case errors.Is(err, store.ErrConflict):
		return EventDetail{}, apierr.New(apierr.CodeOperationInProgress,
			"A delivery attempt of this event is running; retry when it has finished")
	case err != nil:
		return EventDetail{}, err
	}
	return s.GetEvent(ctx, t, eventID)
}

func (s *Service) view(r store.EventWithDelivery) (Event, error) {
	var env events.Envelope
	if err := json.Unmarshal(r.Event.Envelope, &env); err != nil {
		return Event{}, fmt.Errorf("webhooks: stored envelope of %s: %w", r.Event.ID, err)
	}
	e := Event{ID: env.ID, Type: env.Type, ResourceID: r.Event.ResourceID, Timestamp: env.Timestamp, Data: env.Data}
	if d := r.Delivery; d != nil {
		st := &DeliveryStatus{Status: d.State, AttemptCount: d.Attempts, DeliveredAt: d.DeliveredAt}
		if d.State == store.DeliveryPending {
			next := d.NextAttemptAt
			st.NextAttemptAt = &next
			if d.LeaseUntil != nil && !d.LeaseUntil.Before(s.db.Now()) {
				st.Status, st.NextAttemptAt = StatusInProgress, nil
			}
		}
		e.Delivery = st
	}
	return e, nil
}
