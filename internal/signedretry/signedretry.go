// Package signedretry is the two-step signed retry that embedded-wallet
// operations share (R-AUTH-10..17): the first, unsigned request is recorded
// exactly (method, path, SHA-256 of the body, the API token) and answered
// with a payload to sign; the retry repeats it with a stamp over that payload
// (Service-Wallet-Signature) and the request's id (Request-Id). Claim checks
// the retry against the record and the caller's key policy inside the
// caller's transaction; Complete burns the request in the same transaction
// as the operation's effect, so the operation runs at most once.
//
// The stamp format is documented in docs/wallet-signatures.md.
package signedretry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

var randReader = rand.Reader

// Header names.
const (
	HeaderSignature = "Service-Wallet-Signature"
	HeaderRequestID = "Request-Id"
)

// TTL is how long a first step may be retried.
const TTL = 5 * time.Minute

// Request statuses.
const (
	StatusPending    = "PENDING"
	StatusProcessing = "PROCESSING"
	StatusCompleted  = "COMPLETED"
)

// Incoming is what the HTTP layer knows of a request.
type Incoming struct {
	TokenID   string
	Method    string
	Path      string
	Body      []byte
	Signature string // Service-Wallet-Signature
	RequestID string // Request-Id
}

// Retry reports whether the request is a retry (it carries either header).
func (in Incoming) Retry() bool { return in.Signature != "" || in.RequestID != "" }

// Challenge is the 202 answer to a first step.
type Challenge struct {
	PayloadToSign string    `json:"payloadToSign"`
	RequestID     string    `json:"requestId"`
	ExpiresAt     time.Time `json:"expiresAt"`
}

// Op is the operation a first step is for.
type Op struct {
	// AccountID is the wallet whose session keys may sign.
	AccountID string
	// Operation names it (CREDENTIAL_REVOKE, EXPORT…).
	Operation string
	// Parameters are what the payload shows the signer (public).
	Parameters map[string]string
	// Params is what the operation needs on completion (stored, not shown).
	Params any
}

// payload is what the client signs. Field order is fixed by the struct.
type payload struct {
	Operation   string            `json:"operation"`
	RequestID   string            `json:"requestId"`
	AccountID   string            `json:"accountId"`
	Parameters  map[string]string `json:"parameters"`
	BodySHA256  string            `json:"bodySha256"`
	TimestampMs string            `json:"timestampMs"`
}

func bodyHash(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Issue records a first step in tx and returns its challenge.
func Issue(ctx context.Context, tx *store.Tx, t store.Tenant, in Incoming, op Op) (Challenge, error) {
	now := tx.Now().UTC().Truncate(time.Millisecond)
	params, err := json.Marshal(op.Params)
	if err != nil {
		return Challenge{}, err
	}
	if op.Parameters == nil {
		op.Parameters = map[string]string{}
	}
	reqID := id.New(id.Request)
	p, err := json.Marshal(payload{Operation: op.Operation, RequestID: reqID, AccountID: op.AccountID,
		Parameters: op.Parameters, BodySHA256: bodyHash(in.Body), TimestampMs: strconv.FormatInt(now.UnixMilli(), 10)})
	if err != nil {
		return Challenge{}, err
	}
	r := store.SignedRequest{ID: reqID, Tenant: t, TokenID: in.TokenID, Method: in.Method, Path: in.Path,
		BodySHA256: bodyHash(in.Body), AccountID: op.AccountID, Operation: op.Operation, Params: params,
		Payload: string(p), Status: StatusPending, ExpiresAt: now.Add(TTL), CreatedAt: now}
	if err := tx.InsertSignedRequest(ctx, r); err != nil {
		return Challenge{}, err
	}
	return Challenge{PayloadToSign: r.Payload, RequestID: reqID, ExpiresAt: r.ExpiresAt}, nil
}

// Authorize decides whether the stamp's key may sign the request (the
// caller's key policy); it returns a client error otherwise.
type Authorize func(req store.SignedRequest, stamp Stamp) error

// Claimed is a retry that passed every check.
type Claimed struct {
	Request store.SignedRequest
	Stamp   Stamp
}

// Claim checks a retry inside tx, locking its request, in this order:
// both headers present (WALLET_SIGNATURE_MISSING, REQUEST_ID_MISSING), the
// stamp parses (WALLET_SIGNATURE_MALFORMED), the request exists for this
// token, method and path (REQUEST_NOT_FOUND), is not burned
// (REQUEST_ALREADY_COMPLETED) or expired (REQUEST_EXPIRED), the body is the
// first step's (WALLET_SIGNATURE_BODY_MISMATCH), the stamp signs the payload
// (WALLET_SIGNATURE_INVALID) and the key may sign (authorize).
func Claim(ctx context.Context, tx *store.Tx, t store.Tenant, in Incoming, authorize Authorize) (Claimed, error) {
	if in.Signature == "" {
		return Claimed{}, apierr.New("WALLET_SIGNATURE_MISSING", "Request-Id was sent without the "+HeaderSignature+" header; send the stamp over payloadToSign with it")
	}
	if in.RequestID == "" {
		return Claimed{}, apierr.New("REQUEST_ID_MISSING", HeaderSignature+" was sent without the Request-Id header; echo the requestId of the 202 response")
	}
	stamp, err := ParseStamp(in.Signature)
	if err != nil {
		return Claimed{}, apierr.New("WALLET_SIGNATURE_MALFORMED", HeaderSignature+" is not a valid stamp: "+err.Error())
	}
	notFound := apierr.NotFound("REQUEST_NOT_FOUND", "Signed request "+quoteID(in.RequestID)+" for this operation")
	if !id.Valid(id.Request, in.RequestID) {
		return Claimed{}, notFound
	}
	req, err := tx.LockSignedRequest(ctx, t, in.RequestID)
	if errors.Is(err, store.ErrNotFound) {
		return Claimed{}, notFound
	}
	if err != nil {
		return Claimed{}, err
	}
	if req.TokenID != in.TokenID || req.Method != in.Method || req.Path != in.Path {
		return Claimed{}, notFound
	}
	switch {
	case req.Status == StatusCompleted:
		return Claimed{}, apierr.New(apierr.CodeRequestAlreadyCompleted, "This signed request already completed; its Request-Id cannot be used again")
	case req.Status == StatusPending && !tx.Now().Before(req.ExpiresAt):
		return Claimed{}, apierr.New(apierr.CodeRequestExpired, "The signed request expired; send the request again without signature headers for a new payloadToSign")
	}
	if bodyHash(in.Body) != req.BodySHA256 {
		return Claimed{}, apierr.New("WALLET_SIGNATURE_BODY_MISMATCH", "The retry's body differs from the first request's; repeat it byte for byte")
	}
	if !stamp.Verify(req.Payload) {
		return Claimed{}, apierr.New("WALLET_SIGNATURE_INVALID", "The stamp's signature does not verify over payloadToSign with its public key")
	}
	if err := authorize(req, stamp); err != nil {
		return Claimed{}, err
	}
	return Claimed{Request: req, Stamp: stamp}, nil
}

// ClaimProof claims a first step whose proof is not a stamp but a ceremony
// over its payload (a passkey assertion over the challenge derived from
// payloadToSign), sent to another endpoint than the first step: Request-Id
// present (REQUEST_ID_MISSING), the request exists for this token
// (REQUEST_NOT_FOUND), is not burned or expired; then check decides (the
// operation is the expected one, the proof verifies).
func ClaimProof(ctx context.Context, tx *store.Tx, t store.Tenant, in Incoming, check func(req store.SignedRequest) error) (Claimed, error) {
	if in.RequestID == "" {
		return Claimed{}, apierr.New("REQUEST_ID_MISSING", "Send the requestId of the challenge in the Request-Id header")
	}
	notFound := apierr.NotFound("REQUEST_NOT_FOUND", "Pending challenge "+quoteID(in.RequestID))
	if !id.Valid(id.Request, in.RequestID) {
		return Claimed{}, notFound
	}
	req, err := tx.LockSignedRequest(ctx, t, in.RequestID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && req.TokenID != in.TokenID) {
		return Claimed{}, notFound
	}
	if err != nil {
		return Claimed{}, err
	}
	switch {
	case req.Status == StatusCompleted:
		return Claimed{}, apierr.New(apierr.CodeRequestAlreadyCompleted, "This challenge was already used; request a new one")
	case !tx.Now().Before(req.ExpiresAt):
		return Claimed{}, apierr.New(apierr.CodeRequestExpired, "The challenge expired; request a new one")
	}
	if err := check(req); err != nil {
		return Claimed{}, err
	}
	return Claimed{Request: req}, nil
}

// Complete burns a claimed request in the transaction of its effect.
func Complete(ctx context.Context, tx *store.Tx, c Claimed) error {
	return tx.FinishSignedRequest(ctx, c.Request.Tenant, c.Request.ID, StatusCompleted, "", tx.Now())
}

// Processing marks a claimed request as waiting (an approval gates it): the
// client re-sends the identical retry until it completes.
func Processing(ctx context.Context, tx *store.Tx, c Claimed) error {
	return tx.FinishSignedRequest(ctx, c.Request.Tenant, c.Request.ID, StatusProcessing, "", tx.Now())
}

// Params decodes a request's stored params into v.
func Params(req store.SignedRequest, v any) error { return json.Unmarshal(req.Params, v) }

// VerifyPayload checks a stamp over a payload the resource itself carries
// (a quote's payloadToSign), where there is no recorded first step.
func VerifyPayload(header, payload string, authorize func(Stamp) error) (Stamp, error) {
	if header == "" {
		return Stamp{}, apierr.New("WALLET_SIGNATURE_MISSING", "This operation needs the "+HeaderSignature+" header: a stamp over payloadToSign")
	}
	stamp, err := ParseStamp(header)
	if err != nil {
		return Stamp{}, apierr.New("WALLET_SIGNATURE_MALFORMED", HeaderSignature+" is not a valid stamp: "+err.Error())
	}
	if !stamp.Verify(payload) {
		return Stamp{}, apierr.New("WALLET_SIGNATURE_INVALID", "The stamp's signature does not verify over payloadToSign with its public key")
	}
	return stamp, authorize(stamp)
}

// quoteID keeps a client-sent id printable and short in a reason.
func quoteID(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.Quote(s)
}

type incomingKey struct{}

// WithIncoming carries a request's signed-retry view to services whose
// signatures do not take it (a hook inside another capability's update).
func WithIncoming(ctx context.Context, in Incoming) context.Context {
	return context.WithValue(ctx, incomingKey{}, in)
}

// FromContext returns what WithIncoming stored, if anything.
func FromContext(ctx context.Context) (Incoming, bool) {
	in, ok := ctx.Value(incomingKey{}).(Incoming)
	return in, ok
}
