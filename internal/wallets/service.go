// Package wallets holds embedded wallets: EMBEDDED_WALLET internal accounts
// that the service custodies but only the customer can move. It owns the
// wallet's signing key, the customer's credentials on it (EMAIL_OTP,
// SMS_OTP, OAUTH, PASSKEY), the sessions a verified credential opens, the
// operations a session key must sign (through package signedretry), export
// and delegated keys. It knows nothing about HTTP.
//
// Secrets: wallet and delegated private keys are stored sealed (Sealer);
// one-time codes and verification tokens only as hashes, compared in
// constant time; session keys are public keys the client holds the private
// half of. None is ever logged.
package wallets

import (
	"io"
	"log/slog"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Service implements the embedded-wallet rules.
type Service struct {
	DB     *store.DB
	Sealer Sealer
	// Sender delivers production one-time codes; sandbox codes are fixed
	// and never sent. Without it production OTP challenges are refused.
	Sender OTPSender
	// Delegation checks the card or agent of a delegated key and reacts to
	// revocations (the cards and agents capabilities plug in here).
	Delegation Delegation
	// OIDC verifies the ID tokens of OAUTH credentials.
	OIDC *OIDC
	Log  *slog.Logger
}

// New returns a service over db that seals secrets with sealer.
func New(db *store.DB, sealer Sealer, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{DB: db, Sealer: sealer, OIDC: &OIDC{}, Log: log}
}
