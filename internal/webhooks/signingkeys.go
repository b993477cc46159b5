package webhooks

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// The signing keys a receiver needs: the tenant's Standard Webhooks secrets
// and the installation's public key (docs/webhook-signatures.md).

// SigningKeys is the body of GET /webhooks/signing-keys.
type SigningKeys struct {
	// Secrets sign every delivery now, newest (current) first. During a
	// rotation's overlap there are two or more.
	Secrets []SecretView `json:"secrets"`
	// PublicKey verifies X-Service-Signature: PEM "PUBLIC KEY" (P-256).
	PublicKey string `json:"publicKey"`
}

// SecretView is one Standard Webhooks secret.
type SecretView struct {
	ID        string     `json:"id"`
	Secret    string     `json:"secret"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"` // absent on the current secret
}

// RotateRequest is the body of POST /webhooks/secret/rotate.
type RotateRequest struct {
	// OverlapSeconds is how long the old secret keeps signing next to the
	// new one (default a day; 0 stops it at once).
	OverlapSeconds *int64 `json:"overlapSeconds"`
}

// Rotation bounds.
const (
	DefaultOverlap = 24 * time.Hour
	MaxOverlap     = 7 * 24 * time.Hour
)

// Validate lists the invalid fields of r.
func (r RotateRequest) Validate() error {
	var f apierr.Fields
	if v := r.OverlapSeconds; v != nil && (*v < 0 || *v > int64(MaxOverlap/time.Second)) {
		f.Add("overlapSeconds", apierr.Maximum, "must be from 0 to %d seconds (7 days)", int64(MaxOverlap/time.Second))
	}
	return f.Err()
}

// SigningKeys returns the tenant's active secrets (making the first one if
// needed) and the public key.
func (s *Service) SigningKeys(ctx context.Context, t store.Tenant) (SigningKeys, error) {
	list, err := activeSecrets(ctx, s.db, t)
	if err != nil {
		return SigningKeys{}, err
	}
	pub, err := s.send.key.publicPEM(ctx)
	if err != nil {
		return SigningKeys{}, err
	}
	out := SigningKeys{Secrets: make([]SecretView, 0, len(list)), PublicKey: string(pub)}
	for _, sec := range list {
		out.Secrets = append(out.Secrets, SecretView{ID: sec.ID, Secret: sec.Secret, CreatedAt: sec.CreatedAt, ExpiresAt: sec.ExpiresAt})
	}
	return out, nil
}

// RotateSecret makes a new current secret. The old one keeps signing next to
// it until the overlap ends, so receivers can switch at their own pace.
func (s *Service) RotateSecret(ctx context.Context, t store.Tenant, r RotateRequest) (SigningKeys, error) {
	if err := r.Validate(); err != nil {
		return SigningKeys{}, err
	}
	overlap := DefaultOverlap
	if r.OverlapSeconds != nil {
		overlap = time.Duration(*r.OverlapSeconds) * time.Second
	}
	if err := rotateSecret(ctx, s.db, t, overlap); err != nil {
		return SigningKeys{}, err
	}
	return s.SigningKeys(ctx, t)
}

// PublicKeyPEM returns the installation's public key as PEM.
func (s *Service) PublicKeyPEM(ctx context.Context) ([]byte, error) {
	return s.send.key.publicPEM(ctx)
}
