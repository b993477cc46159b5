package sca

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/scapasskey"
	"github.com/paymentsd/paymentsd/internal/store"
)

// PASSKEY factors (package scapasskey): the relying party is the
// platform's setting; a registration's and a login's ceremony session is
// kept with the pending factor or login, a payout challenge's with the
// challenge, whose WebAuthn challenge is the payout's binding — the
// device's signature covers the payee and amount.

func passkeyConfig(s Settings) scapasskey.Config {
	return scapasskey.Config{RPID: s.PasskeyRelyingPartyID, Origins: s.PasskeyAllowedOrigins}
}

func (s *Service) passkeyConfig(ctx context.Context, q store.Q, t store.Tenant) (scapasskey.Config, error) {
	settings, err := s.Settings(ctx, q, t)
	return passkeyConfig(settings), err
}

// passkeyError maps a ceremony's failure: unconfigured is the platform's
// to fix (409), anything else is a refused proof (400, counted).
func passkeyError(err error, field string) (refusal error, fatal error) {
	switch {
	case errors.Is(err, scapasskey.ErrNotConfigured):
		return nil, apierr.Conflict("No passkey relying party is configured; set passkeyRelyingPartyId and passkeyAllowedOrigins with PATCH /sca/settings")
	case errors.Is(err, scapasskey.ErrOrigin):
		return wrongProof("origin", "is not one of the allowed passkey origins"), nil
	}
	return wrongProof(field, "is not a valid passkey response for this ceremony: "+err.Error()), nil
}

func (s *Service) startPasskey(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor) (EnrolStart, error) {
	cfg, err := s.passkeyConfig(ctx, q, t)
	if err != nil {
		return EnrolStart{}, err
	}
	b, err := scapasskey.BeginRegistration(cfg, customerID)
	if err != nil {
		_, fatal := passkeyError(err, "type")
		return EnrolStart{}, fatal
	}
	f.Session = b.Session
	return EnrolStart{Type: FactorPasskey, CredentialID: f.CredentialID, Options: b.Options,
		AllowedOrigins: cfg.Origins, RelyingPartyID: cfg.RPID}, nil
}

// checkPasskeyRegistration finishes a registration; a refusal is counted by
// the caller.
func (s *Service) checkPasskeyRegistration(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor, req ConfirmRequest) (bool, error, error) {
	cfg, err := s.passkeyConfig(ctx, q, t)
	if err != nil {
		return false, nil, err
	}
	cred, _, err := scapasskey.FinishRegistration(cfg, customerID, f.Session, req.Credential, *req.Origin)
	if err != nil {
		refusal, fatal := passkeyError(err, "credential")
		return false, refusal, fatal
	}
	f.Credential, f.Session = cred, nil
	return true, nil, nil
}

// beginPasskeyAssertion starts an assertion by f over challenge (nil: a
// random one).
func (s *Service) beginPasskeyAssertion(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor, challenge []byte) (scapasskey.Begin, scapasskey.Config, error) {
	cfg, err := s.passkeyConfig(ctx, q, t)
	if err != nil {
		return scapasskey.Begin{}, cfg, err
	}
	b, err := scapasskey.BeginAssertion(cfg, customerID, f.Credential, challenge)
	if err != nil {
		_, fatal := passkeyError(err, "factor")
		return b, cfg, fatal
	}
	return b, cfg, nil
}

// checkPasskeyAssertion verifies an assertion against session.
func (s *Service) checkPasskeyAssertion(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor, session, assertion json.RawMessage, origin string) (bool, error, error) {
	if len(session) == 0 {
		return false, apierr.Conflict("No passkey ceremony was started for this proof"), nil
	}
	cfg, err := s.passkeyConfig(ctx, q, t)
	if err != nil {
		return false, nil, err
	}
	cred, err := scapasskey.FinishAssertion(cfg, customerID, f.Credential, session, assertion, origin)
	if err != nil {
		refusal, fatal := passkeyError(err, "passkeyAssertion")
		return false, refusal, fatal
	}
	f.Credential = cred
	return true, nil, nil
}

// bindingBytes is a challenge's binding as the WebAuthn challenge.
func bindingBytes(binding string) []byte {
	b, _ := hex.DecodeString(binding)
	return b
}

// validOrigin: an https origin, or http on localhost (development).
func validOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return u.Scheme == "https" || (u.Scheme == "http" && u.Hostname() == "localhost")
}
