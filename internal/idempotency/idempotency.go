// Package idempotency lets a service commit a request's replayable response
// in the same transaction as the request's effect (R-IDEM-02). The HTTP layer
// claims the Idempotency-Key before the handler runs and puts the claim in the
// context; a service that changes state calls Record inside its transaction.
// If the process dies after that commit, a retry finds the stored response and
// replays it, so the effect happens exactly once, crash or not.
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
}

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
