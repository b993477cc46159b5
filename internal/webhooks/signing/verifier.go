package signing

import (
	"crypto/ecdsa"
	"fmt"
	"net/http"
	"time"
)

// Verifier checks both signatures of a delivery the way a receiver would.
// Tests that receive webhooks (for example on an httptest.Server) use it.
type Verifier struct {
	// Secrets are the endpoint's Standard Webhooks secrets; a delivery
	// passes if any one of them produced any webhook-signature entry.
	Secrets []Secret
	// PublicKey, if set, must have produced X-Service-Signature. If nil,
	// that header is not checked.
	PublicKey *ecdsa.PublicKey
	// Tolerance for webhook-timestamp; zero means DefaultTolerance.
	Tolerance time.Duration
	// Now is the receiver's clock; nil means time.Now.
	Now func() time.Time
}

// Verify checks the headers of a delivery against its raw body. The errors
// are those of Verify and VerifyBody.
func (v Verifier) Verify(h http.Header, body []byte) error {
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if err := Verify(v.Secrets, h, body, now(), v.Tolerance); err != nil {
		return err
	}
	if v.PublicKey == nil {
		return nil
	}
	sig := h.Values(ServiceSignatureHeader)
	switch len(sig) {
	case 0:
		return &HeaderError{Header: ServiceSignatureHeader, Err: ErrMissingHeader}
	case 1:
		return VerifyBody(v.PublicKey, sig[0], body)
	default:
		return fmt.Errorf("%w: %d header lines", ErrMalformedServiceSignature, len(sig))
	}
}
