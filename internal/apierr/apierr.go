// Package apierr is the one client-safe error type of the API and the catalog
// that fixes which HTTP status every error code travels with.
//
// Services return *Error (or wrap one); the HTTP layer maps it to a response in
// exactly one place. Anything that is not an *Error becomes 500 INTERNAL_ERROR
// with no internals in the body.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is an error that may be shown to API clients as {code, reason, details}
// (plus message and status, see MarshalJSON).
type Error struct {
	Status  int            `json:"-"`
	Code    string         `json:"code"`
	Reason  string         `json:"reason"`
	Details map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Reason }

// MarshalJSON writes the spec's {code, reason, details} and, for clients of
// the hosted API this spec describes (its CLI and SDK read `message` and
// `status`), `message` (the same text as reason) and `status` (the HTTP
// status): an additive change the versioning rules allow.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Code    string         `json:"code"`
		Reason  string         `json:"reason"`
		Details map[string]any `json:"details,omitempty"`
		Message string         `json:"message"`
		Status  int            `json:"status"`
	}{e.Code, e.Reason, e.Details, e.Reason, e.Status})
}

// New builds an error whose HTTP status comes from the catalog. Codes missing
// from the catalog are a programming mistake and panic in tests (see
// TestEveryCodeUsedIsCatalogued); at run time they fall back to 500.
func New(code, reason string) *Error {
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &Error{Status: status, Code: code, Reason: reason}
}

// Newf is New with a formatted reason.
func Newf(code, format string, args ...any) *Error {
	return New(code, fmt.Sprintf(format, args...))
}

// WithDetails returns a copy of e carrying details.
func (e *Error) WithDetails(details map[string]any) *Error {
	c := *e
	c.Details = details
	return &c
}

// StatusOf reports the HTTP status registered for a code.
func StatusOf(code string) (int, bool) {
	s, ok := statusOf[code]
	return s, ok
}

// From extracts the client-safe error from err, or reports false.
func From(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Internal is the only 500 body clients ever see for unexpected failures.
func Internal() *Error {
	return New(CodeInternal, "An internal error occurred. It has been logged; retry later or contact support with the request id.")
}

// Common constructors.

func InvalidInput(reason string) *Error { return New(CodeInvalidInput, reason) }

func NotFound(code, what string) *Error { return Newf(code, "%s not found", what) }

func Unauthorized() *Error {
	return New(CodeUnauthorized, "Missing or invalid API credentials")
}

func Forbidden(reason string) *Error { return New(CodeForbidden, reason) }

func Conflict(reason string) *Error { return New(CodeConflict, reason) }
