// Package idempotency lets a service commit a request's replayable response
// in the same transaction as the request's effect (R-IDEM-02). The HTTP layer
// puts a Claim in the context; a service that changes state calls Record
// inside its transaction. If the process dies after that commit, a retry
// finds the stored response and replays it, so the effect happens exactly
// once, crash or not.
//
// A claim is either held (the HTTP layer locked the key in a transaction of
// its own before the handler ran, and Record completes it) or optimistic
// (nothing was written first; Record inserts the finished key, and the unique
// key makes a concurrent twin's insert fail, rolling its effect back). The
// optimistic form saves a commit per request and leaves nothing locked when
// a process dies mid-request; it serves routes whose every success records.
package idempotency

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// MaxKeyLength is the longest accepted Idempotency-Key (R-IDEM-01).
const MaxKeyLength = 255

// Claim is a request's hold on its Idempotency-Key.
type Claim struct {
	Tenant    store.Tenant
	Key       string
	LockToken string
	// Status is the HTTP status of the request's success response.
	Status int

	// Optimistic claims hold no lock: Record inserts the finished key with
	// Hash, the request's fingerprint.
	Optimistic bool
	Hash       string
	// Body is what Record stored (the response once its transaction
	// commits).
	Body []byte
}

// ErrRaced is Record's answer on an optimistic claim whose key another
// request finished first: roll back, then replay that request's response.
var ErrRaced = errors.New("idempotency: another request with this key finished first")

type ctxKey struct{}

// With attaches c to ctx.
func With(ctx context.Context, c *Claim) context.Context { return context.WithValue(ctx, ctxKey{}, c) }

// FromContext returns the claim of the current request, or nil.
func FromContext(ctx context.Context) *Claim {
	c, _ := ctx.Value(ctxKey{}).(*Claim)
	return c
}

// Record stores v (encoded exactly as the HTTP layer will send it) as the
// response to replay for this request's key, inside tx. Without a claim in
// ctx it does nothing. If the claim was lost (the request ran past its lock
// and a retry took the key over), Record fails so the caller rolls back its
// effect instead of doing it twice.
func Record(ctx context.Context, tx *store.Tx, v any) error {
	c := FromContext(ctx)
	if c == nil {
		return nil
	}
	body, err := Encode(v)
	if err != nil {
		return err
	}
	if c.Optimistic {
		if c.Status == 0 {
			c.Status = 200 // an unfinished record would read as "in flight"
		}
		err := tx.InsertIdempotencyRecord(ctx, c.Tenant, c.Key, c.Hash, c.Status, body)
		if errors.Is(err, store.ErrConflict) {
			return ErrRaced
		}
		c.Body = body
		return err
	}
	c.Body = body
	err = tx.CompleteIdempotencyKey(ctx, c.Tenant, c.Key, c.LockToken, c.Status, body)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New(apierr.CodeOperationInProgress,
			"Another request with the same Idempotency-Key took over this one; retry with the same key to get its result")
	}
	return err
}

// Encode is the one encoding of response bodies, shared with the HTTP layer so
// a replay is byte-for-byte the first response.
func Encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
