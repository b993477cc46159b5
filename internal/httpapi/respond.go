package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// writeJSON sends v with status, encoded as every response (and every
// idempotent replay) is: compact JSON and a newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if rec, ok := w.(*recorder); ok && rec.writeRecorded(status) {
		return // already encoded once, in the transaction that recorded it
	}
	body, err := idempotency.Encode(v)
	if err != nil {
		// Our own types always marshal; reaching here is a bug.
		status = http.StatusInternalServerError
		body, _ = idempotency.Encode(apierr.Internal())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError is the one place where errors become HTTP responses. Client-safe
// *apierr.Error values are sent as {code, reason, details}; store sentinels
// that escaped a service get their generic code; anything else is logged and
// becomes a 500 INTERNAL_ERROR with no internals.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := apierr.From(err)
	switch {
	case ok:
	case errors.Is(err, store.ErrNotFound):
		e = apierr.New(apierr.CodeNotFound, "The requested resource was not found")
	case errors.Is(err, store.ErrConflict):
		e = apierr.Conflict("The request conflicts with the current state of the resource")
	case errors.Is(err, ledger.ErrAmountTooLarge), errors.Is(err, ledger.ErrAmountOverflow):
		// An amount derived from valid input (a conversion, fees added)
		// that the ledger cannot take.
		e = apierr.InvalidInput(fmt.Sprintf("An amount of this request would exceed the largest the ledger takes (%d in the smallest unit)", ledger.MaxAmount)).
			WithDetails(map[string]any{"maxAmount": ledger.MaxAmount})
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away; nobody reads this response.
		e = apierr.New(apierr.CodeInvalidInput, "Request cancelled by the client")
	default:
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		e = apierr.Internal()
	}
	writeJSON(w, e.Status, e)
}
