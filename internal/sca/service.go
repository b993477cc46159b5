package sca

import (
	"log/slog"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Sealer encrypts secrets at rest (the server wires the same kind of sealer
// as package wallets: a data key kept in server_secrets, itself sealed under
// the operator's key ring). Associated data binds a sealed value to its
// customer and factor.
type Sealer interface {
	Seal(plaintext, ad []byte) ([]byte, error)
	Open(sealed, ad []byte) ([]byte, error)
}

// Service implements SCA.
type Service struct {
	DB     *store.DB
	Sealer Sealer
	Log    *slog.Logger
	// Issuer names the service in TOTP provisioning URIs.
	Issuer string
}

// New returns the service.
func New(db *store.DB, sealer Sealer, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{DB: db, Sealer: sealer, Log: log, Issuer: "paymentsd"}
}
