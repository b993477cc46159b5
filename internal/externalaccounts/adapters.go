package externalaccounts

import (
	"context"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// BankValidator validates a new US bank account (a micro-deposit or
// account-verification partner in production). It reports what is known
// when the account is registered: VALIDATED, FAILED with a reason, or
// PENDING while the check runs for a few banking days.
type BankValidator interface {
	Validate(ctx context.Context, routingNumber, accountNumber string) (status, reason string)
}

// SandboxValidator decides by the last four digits of the account number:
//
//	0000  PENDING for good: payouts get 409 BANK_ACCOUNT_VALIDATION_PENDING
//	9999  FAILED: payouts get 400 INVALID_BANK_ACCOUNT
//	else  VALIDATED at once
type SandboxValidator struct{}

// Sandbox magic account-number suffixes.
const (
	SandboxPendingSuffix = "0000"
	SandboxFailedSuffix  = "9999"
)

// Validate implements BankValidator.
func (SandboxValidator) Validate(_ context.Context, _, accountNumber string) (string, string) {
	switch {
	case strings.HasSuffix(accountNumber, SandboxPendingSuffix):
		return ValidationPending, ""
	case strings.HasSuffix(accountNumber, SandboxFailedSuffix):
		return ValidationFailed, "the receiving bank reported no such account (sandbox account number ending 9999)"
	}
	return ValidationValidated, ""
}

func (s *Service) validateBank(ctx context.Context, t store.Tenant, routing, account string) (string, string) {
	v := s.ProductionValidator
	if t.Env == store.EnvSandbox {
		v = s.SandboxValidator
	}
	if v == nil {
		return ValidationPending, ""
	}
	return v.Validate(ctx, routing, account)
}

// SCA authenticates the customer for a trust change: Issue starts a
// challenge (sending the code, say), Check verifies the proof the customer
// sends back.
type SCA interface {
	Issue(ctx context.Context, t store.Tenant, customerID, purpose string, now time.Time) (ScaChallenge, error)
	Check(ctx context.Context, t store.Tenant, challengeID string, proof TrustConfirmRequest) error
}

// SandboxCode is the sandbox one-time code of every trust change.
const SandboxCode = "123456"

// SandboxSCA issues SMS_OTP challenges whose code is always 123456 and that
// last 10 minutes; passkeys are not enrolled in sandbox.
type SandboxSCA struct{}

// Issue implements SCA.
func (SandboxSCA) Issue(_ context.Context, _ store.Tenant, _, purpose string, now time.Time) (ScaChallenge, error) {
	return ScaChallenge{ID: id.New("ScaChallenge"), ExpiresAt: now.Add(10 * time.Minute), Factor: "SMS_OTP",
		AvailableFactors: []string{"SMS_OTP"}, Purpose: purpose}, nil
}

// Check implements SCA.
func (SandboxSCA) Check(_ context.Context, _ store.Tenant, _ string, proof TrustConfirmRequest) error {
	x := &checker{}
	switch {
	case proof.Code == nil:
		x.add("passkeyAssertion", apierr.Format, "no passkey is enrolled; confirm with the code (always %s in sandbox)", SandboxCode)
	case *proof.Code != SandboxCode:
		x.add("code", apierr.Format, "is not the code of this challenge (always %s in sandbox)", SandboxCode)
	}
	return x.err()
}

func (s *Service) sca(t store.Tenant) SCA {
	if t.Env == store.EnvSandbox {
		return s.SandboxSCA
	}
	return s.ProductionSCA
}
