package carddata

import (
	"context"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Card is the sensitive data of one card, as the cards service opens it
// (the PAN is stored only sealed there).
type Card struct {
	Tenant   store.Tenant
	ID       string
	PAN      string
	ExpMonth int
	ExpYear  int
}

// Revealed is what the hosted reveal page shows.
type Revealed struct {
	PAN      string
	ExpMonth int
	ExpYear  int
	CVV2     string
}

// Lifetimes of the signed pages.
const (
	RevealTTL    = 5 * time.Minute  // the reveal URL
	PINEntryTTL  = 10 * time.Minute // the PIN page URL
	PINSubmitTTL = 10 * time.Minute // a loaded PIN page's submission
)

// pvki is the PIN verification key index new PVVs are computed with
// (stored with each PVV so that the key can be rotated).
const pvki = 1

// Names of the server secrets (store.DB.ServerSecret, sealed under the key
// ring) the card keys come from.
const (
	secretCVK       = "card-verification-key"
	secretPVK       = "pin-verification-key"
	secretURL       = "card-page-signing-key"
	secretTransport = "pin-transport-key"
)

// Service holds card data: computes CVVs, keeps PIN verification values and
// counters, mints and checks the hosted pages' single-use tokens, and seals
// provisioning payloads.
type Service struct {
	db  *store.DB
	now func() time.Time

	mu   sync.Mutex
	keys *keys
}

// keys are the card keys, opened once per node.
type keys struct {
	cvk, pvk  KeyPair
	url       signer
	transport *ecdh.PrivateKey
}

// New returns the service over db; its clock is the store's.
func New(db *store.DB) *Service { return &Service{db: db, now: db.Now} }

func (s *Service) loadKeys(ctx context.Context) (*keys, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		return s.keys, nil
	}
	secret := map[string][]byte{}
	for _, name := range []string{secretCVK, secretPVK, secretURL, secretTransport} {
		b, err := s.db.ServerSecret(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("carddata: %s: %w", name, err)
		}
		secret[name] = b
	}
	k := &keys{url: signer{key: secret[secretURL]}}
	copy(k.cvk.A[:], secret[secretCVK][:8])
	copy(k.cvk.B[:], secret[secretCVK][8:16])
	copy(k.pvk.A[:], secret[secretPVK][:8])
	copy(k.pvk.B[:], secret[secretPVK][8:16])
	scalar, err := hkdf.Key(sha256.New, secret[secretTransport], nil, "paymentsd pin transport P-256 v1", 32)
	if err != nil {
		return nil, err
	}
	if k.transport, err = ecdh.P256().NewPrivateKey(scalar); err != nil {
		return nil, fmt.Errorf("carddata: PIN transport key: %w", err)
	}
	s.keys = k
	return k, nil
}

// Reveal returns what the reveal page shows: the PAN, the expiry and the
// CVV2 computed now (never stored).
func (s *Service) Reveal(ctx context.Context, c Card) (Revealed, error) {
	k, err := s.loadKeys(ctx)
	if err != nil {
		return Revealed{}, err
	}
	cvv, err := CVV2(k.cvk, c.PAN, c.ExpMonth, c.ExpYear)
	if err != nil {
		return Revealed{}, err
	}
	return Revealed{PAN: c.PAN, ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, CVV2: cvv}, nil
}

// TransportPublicKey is the public key clients encrypt PINs to
// (PINEnvelope), uncompressed P-256, base64url.
func (s *Service) TransportPublicKey(ctx context.Context) (string, error) {
	k, err := s.loadKeys(ctx)
	if err != nil {
		return "", err
	}
	return b64.EncodeToString(k.transport.PublicKey().Bytes()), nil
}

// Tokenize seals a card's data for a wallet provider: one payload per call.
func (s *Service) Tokenize(_ context.Context, c Card, req ProvisioningRequest) (Provisioning, error) {
	return SealProvisioning(c, req, s.now())
}
