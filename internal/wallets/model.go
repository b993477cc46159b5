package wallets

import (
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/passkey"
	"github.com/paymentsd/paymentsd/internal/signedretry"
)

// Credential types (R-EWA-32).
const (
	TypeEmailOTP = "EMAIL_OTP"
	TypeSMSOTP   = "SMS_OTP"
	TypeOAuth    = "OAUTH"
	TypePasskey  = "PASSKEY"
)

// CredentialTypes is the type enumeration.
var CredentialTypes = []string{TypeEmailOTP, TypeSMSOTP, TypeOAuth, TypePasskey}

// SessionTTL is how long a session lasts unless refreshed or revoked.
const SessionTTL = 24 * time.Hour

// MaxOTPAttempts bounds the attempts at one issued code; then the code is
// void and a new challenge is needed.
const MaxOTPAttempts = 5

// AuthMethod is a credential as the API shows it.
type AuthMethod struct {
	ID           string    `json:"id"`
	AccountID    string    `json:"accountId"`
	Type         string    `json:"type"`
	CredentialID string    `json:"credentialId,omitempty"`
	Nickname     string    `json:"nickname"`
	Verified     bool      `json:"verified"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	// OtpEncryptionTargetBundle is set on answers that issued a new code.
	OtpEncryptionTargetBundle string `json:"otpEncryptionTargetBundle,omitempty"`
}

// AuthSession is a session as the API shows it.
type AuthSession struct {
	ID           string    `json:"id"`
	AccountID    string    `json:"accountId"`
	AuthMethodID string    `json:"authMethodId"`
	Type         string    `json:"type"`
	Nickname     string    `json:"nickname"`
	PublicKey    string    `json:"publicKey"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	ExpiresAt    time.Time `json:"expiresAt"`
	// EncryptedSessionSigningKey: legacy (uncompressed client key) only.
	EncryptedSessionSigningKey string `json:"encryptedSessionSigningKey,omitempty"`
}

// AuthChallenge is the 202 answer of auth operations: the signed-retry
// challenge and the type of the credential concerned.
type AuthChallenge struct {
	signedretry.Challenge
	Type string `json:"type,omitempty"`
}

// Outcome is what a signed-retry operation answers: a challenge (202) or
// its result.
type Outcome[T any] struct {
	Challenge *AuthChallenge
	Result    T
}

// CreateCredentialRequest is the body of POST /auth/credentials.
type CreateCredentialRequest struct {
	Type      *string `json:"type"`
	AccountID *string `json:"accountId"`
	// OidcToken is the ID token an OAUTH credential is bound to.
	OidcToken *string `json:"oidcToken"`
	// PASSKEY: the user's label, the platform-issued registration
	// challenge (base64url) and the authenticator's attestation.
	Nickname    *string              `json:"nickname"`
	Challenge   *string              `json:"challenge"`
	Attestation *passkey.Attestation `json:"attestation"`
}

// Validate checks the request on its own.
func (r *CreateCredentialRequest) Validate() error {
	var f apierr.Fields
	validType(&f, r.Type)
	if r.AccountID == nil {
		f.Add("accountId", apierr.Required, "is required: the EMBEDDED_WALLET internal account")
	} else if !id.Valid(id.InternalAccount, *r.AccountID) {
		f.Add("accountId", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
	}
	oidcToken(&f, r.Type, r.OidcToken)
	passkeyRegistration(&f, r)
	return f.Err()
}

// oidcToken checks the oidcToken field: required for OAUTH, refused for
// other types.
func oidcToken(f *apierr.Fields, typ, token *string) {
	isOAuth := typ != nil && *typ == TypeOAuth
	switch {
	case isOAuth && (token == nil || *token == ""):
		f.Add("oidcToken", apierr.Required, "is required for OAUTH: the OIDC ID token from the identity provider")
	case !isOAuth && token != nil && typ != nil:
		f.Add("oidcToken", apierr.AdditionalProperties, "applies to OAUTH credentials only")
	}
}

// supportedTypes are the credential types this server implements.
var supportedTypes = []string{TypeEmailOTP, TypeSMSOTP, TypeOAuth, TypePasskey}

func validType(f *apierr.Fields, t *string) {
	switch {
	case t == nil:
		f.Add("type", apierr.Required, "is required: one of %s", strings.Join(supportedTypes, ", "))
	case !slices.Contains(supportedTypes, *t):
		f.Add("type", apierr.Enum, "must be one of %s", strings.Join(supportedTypes, ", "))
	}
}

// VerifyRequest is the body of POST /auth/credentials/{id}/verify.
type VerifyRequest struct {
	Type               *string `json:"type"`
	EncryptedOtpBundle *string `json:"encryptedOtpBundle"`
	// OAUTH: a fresh ID token and the session key to bind.
	OidcToken       *string `json:"oidcToken"`
	ClientPublicKey *string `json:"clientPublicKey"`
	// PASSKEY: the WebAuthn assertion over the challenge.
	Assertion *passkey.Assertion `json:"assertion"`
}

// Validate checks the request on its own: each type has its fields, and
// only its fields.
func (r *VerifyRequest) Validate() error {
	var f apierr.Fields
	validType(&f, r.Type)
	oidcToken(&f, r.Type, r.OidcToken)
	if r.Type == nil {
		return f.Err()
	}
	switch *r.Type {
	case TypeOAuth:
		clientKey(&f, "clientPublicKey", r.ClientPublicKey, true)
	case TypePasskey:
		if r.Assertion == nil {
			f.Add("assertion", apierr.Required, "is required for PASSKEY: the WebAuthn assertion over the challenge")
		}
	default:
		if r.EncryptedOtpBundle == nil || *r.EncryptedOtpBundle == "" {
			f.Add("encryptedOtpBundle", apierr.Required, "is required: the HPKE-sealed code and public key")
		}
	}
	only := map[string]bool{"encryptedOtpBundle": *r.Type == TypeEmailOTP || *r.Type == TypeSMSOTP,
		"clientPublicKey": *r.Type == TypeOAuth, "assertion": *r.Type == TypePasskey}
	given := map[string]bool{"encryptedOtpBundle": r.EncryptedOtpBundle != nil, "clientPublicKey": r.ClientPublicKey != nil,
		"assertion": r.Assertion != nil}
	for _, name := range []string{"encryptedOtpBundle", "clientPublicKey", "assertion"} {
		if given[name] && !only[name] {
			f.Add(name, apierr.AdditionalProperties, "does not apply to %s verification", *r.Type)
		}
	}
	return f.Err()
}

// ClientKeyRequest is a body carrying only clientPublicKey (passkey
// challenge, session refresh, export).
type ClientKeyRequest struct {
	ClientPublicKey *string `json:"clientPublicKey"`
}

// clientKey checks a client public key field (compressed or uncompressed
// P-256 in hex).
func clientKey(f *apierr.Fields, field string, v *string, required bool) {
	if v == nil {
		if required {
			f.Add(field, apierr.Required, "is required: a P-256 public key in SEC1 hex")
		}
		return
	}
	if _, _, err := ParsePublicKey(*v); err != nil {
		f.Add(field, apierr.Pattern, "must be a P-256 public key in SEC1 hex, compressed (66 characters, 02 or 03 first) or uncompressed (130, 04 first): %s", err.Error())
	}
}

// ValidateRequired checks a body whose clientPublicKey is required.
func (r *ClientKeyRequest) ValidateRequired() error {
	var f apierr.Fields
	clientKey(&f, "clientPublicKey", r.ClientPublicKey, true)
	return f.Err()
}

// ValidateOptional checks a body whose clientPublicKey is optional.
func (r *ClientKeyRequest) ValidateOptional() error {
	var f apierr.Fields
	clientKey(&f, "clientPublicKey", r.ClientPublicKey, false)
	return f.Err()
}
