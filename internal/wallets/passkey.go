package wallets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/passkey"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

// OpPasskeyLogin is the session creation a passkey assertion completes.
const OpPasskeyLogin = "PASSKEY_LOGIN"

// minChallengeBytes is the shortest registration challenge accepted
// (WebAuthn asks for at least 16 random bytes).
const minChallengeBytes = 16

// PasskeyAuthChallenge is the answer of a PASSKEY challenge (R-EWA-04):
// the credential, the WebAuthn challenge (lowercase hex SHA-256 of the
// session-creation body, R-EWA-05), and the requestId to echo on verify.
type PasskeyAuthChallenge struct {
	AuthMethod
	Challenge string    `json:"challenge"`
	RequestID string    `json:"requestId"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// passkeyLogin is what a PASSKEY_LOGIN request keeps for its completion.
type passkeyLogin struct {
	CredentialID string `json:"credentialId"`
	PublicKey    string `json:"publicKey"`
}

// passkeyRegistration checks the PASSKEY fields of a creation: present for
// PASSKEY (nickname 1-100 letters, digits, spaces and . _ - ' ( )), absent
// otherwise.
func passkeyRegistration(f *apierr.Fields, r *CreateCredentialRequest) {
	if r.Type == nil {
		return
	}
	if *r.Type != TypePasskey {
		for name, given := range map[string]bool{"nickname": r.Nickname != nil, "challenge": r.Challenge != nil, "attestation": r.Attestation != nil} {
			if given {
				f.Add(name, apierr.AdditionalProperties, "applies to PASSKEY credentials only")
			}
		}
		return
	}
	if r.Nickname == nil {
		f.Add("nickname", apierr.Required, "is required for PASSKEY: the user's name for this passkey")
	} else if n := strings.TrimSpace(*r.Nickname); !validNickname(n) {
		f.Add("nickname", apierr.Pattern, "must be 1 to 100 letters, digits, spaces or . _ - ' ( )")
	}
	if r.Challenge == nil {
		f.Add("challenge", apierr.Required, "is required for PASSKEY: the base64url registration challenge the platform issued")
	} else if b, err := passkey.DecodeB64URL("challenge", *r.Challenge); err != nil || len(b) < minChallengeBytes {
		f.Add("challenge", apierr.Format, "must be base64url of at least %d bytes", minChallengeBytes)
	}
	if r.Attestation == nil {
		f.Add("attestation", apierr.Required, "is required for PASSKEY: the authenticator's attestation from navigator.credentials.create()")
	}
}

func validNickname(n string) bool {
	if n == "" || utf8.RuneCountInString(n) > 100 {
		return false
	}
	for _, r := range n {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ' ' && !strings.ContainsRune("._-'()", r) {
			return false
		}
	}
	return true
}

// relyingParty is the tenant's WebAuthn relying party, or INVALID_INPUT.
func relyingParty(cfg *platformconfig.EmbeddedWalletConfig) (passkey.RelyingParty, error) {
	if cfg == nil || cfg.PasskeyRpID == nil || len(cfg.PasskeyOrigins) == 0 {
		return passkey.RelyingParty{}, apierr.InvalidInput("Passkeys need the platform's relying party: set embeddedWalletConfig.passkeyRpId and passkeyOrigins with PATCH /config")
	}
	return passkey.RelyingParty{ID: *cfg.PasskeyRpID, Origins: cfg.PasskeyOrigins}, nil
}

// passkeyRefusal maps a passkey error: malformed input is 400 naming the
// field, a ceremony that does not verify 401.
func passkeyRefusal(err error) error {
	var fe *passkey.FieldError
	var refused *passkey.Refused
	switch {
	case errors.As(err, &fe):
		var f apierr.Fields
		f.Add(fe.Field, apierr.Format, "%s", fe.Reason)
		return f.Err()
	case errors.As(err, &refused):
		return apierr.New(apierr.CodeUnauthorized, "The passkey ceremony does not verify: "+refused.Reason)
	}
	return err
}

// registerPasskey verifies a registration (go-webauthn) against the
// tenant's relying party and fills the credential: identity = the WebAuthn
// credential id, details = the credential record. The challenge is burned.
func registerPasskey(ctx context.Context, tx *store.Tx, c *store.WalletCredential, req CreateCredentialRequest) error {
	cfg, err := platformconfig.EmbeddedWallets(ctx, tx.Q, c.Tenant)
	if err != nil {
		return err
	}
	rp, err := relyingParty(cfg)
	if err != nil {
		return err
	}
	challenge, _ := passkey.DecodeB64URL("challenge", *req.Challenge)
	cred, err := passkey.Register(rp, []byte(c.AccountID), challenge, *req.Attestation)
	if err != nil {
		return passkeyRefusal(err)
	}
	c.Nickname = strings.TrimSpace(*req.Nickname)
	c.Identity = req.Attestation.CredentialID
	if c.Details, err = json.Marshal(cred); err != nil {
		return err
	}
	sum := sha256.Sum256(challenge)
	if err := tx.UseProof(ctx, c.Tenant, store.ProofPasskeyChallenge, hex.EncodeToString(sum[:]), c.ID, tx.Now()); errors.Is(err, store.ErrConflict) {
		var f apierr.Fields
		f.Add("challenge", apierr.Enum, "was already used to register a passkey; each registration needs a fresh challenge")
		return f.Err()
	} else if err != nil {
		return err
	}
	return nil
}

// passkeyChallenge issues a PASSKEY login: the session-creation request
// binding clientPublicKey is recorded as a signed request, and its
// challenge is the hex SHA-256 of that body (R-EWA-03, R-EWA-04, R-EWA-05).
func passkeyChallenge(ctx context.Context, tx *store.Tx, t store.Tenant, in signedretry.Incoming, c store.WalletCredential, clientKey string) (PasskeyAuthChallenge, error) {
	key := strings.ToLower(clientKey)
	ch, err := signedretry.Issue(ctx, tx, t, in, signedretry.Op{AccountID: c.AccountID, Operation: OpPasskeyLogin,
		Parameters: map[string]string{"credentialId": c.ID, "publicKey": key},
		Params:     passkeyLogin{CredentialID: c.ID, PublicKey: key}})
	if err != nil {
		return PasskeyAuthChallenge{}, err
	}
	return PasskeyAuthChallenge{AuthMethod: renderCredential(c), Challenge: passkey.Challenge(ch.PayloadToSign),
		RequestID: ch.RequestID, ExpiresAt: ch.ExpiresAt}, nil
}

// verifyPasskey completes a PASSKEY login (R-EWA-10): the Request-Id names
// the pending challenge of this credential; the assertion over its
// challenge verifies (go-webauthn); the session binds the key of the
// challenge (R-EWA-11). The challenge is burned with it.
func (s *Service) verifyPasskey(ctx context.Context, t store.Tenant, in signedretry.Incoming, credID string, req VerifyRequest) (Outcome[AuthSession], error) {
	var out Outcome[AuthSession]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[AuthSession]{}
		c, err := liveCredential(ctx, tx.Q, t, credID, true)
		if err != nil {
			return err
		}
		if c.Type != TypePasskey {
			return typeMismatch(c.Type)
		}
		var login passkeyLogin
		claimed, err := signedretry.ClaimProof(ctx, tx, t, in, func(r store.SignedRequest) error {
			if err := signedretry.Params(r, &login); err != nil || r.Operation != OpPasskeyLogin || login.CredentialID != c.ID {
				return apierr.NotFound("REQUEST_NOT_FOUND", "Pending passkey challenge of this credential")
			}
			return s.checkAssertion(ctx, tx, &c, r.Payload, *req.Assertion)
		})
		if err != nil {
			return err
		}
		if out.Result, err = s.newSessionTx(ctx, tx, &c, login.PublicKey); err != nil {
			return err
		}
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}

// checkAssertion verifies an assertion of c over the challenge of payload
// and keeps the updated credential record (signature counter).
func (s *Service) checkAssertion(ctx context.Context, tx *store.Tx, c *store.WalletCredential, payload string, a passkey.Assertion) error {
	cfg, err := platformconfig.EmbeddedWallets(ctx, tx.Q, c.Tenant)
	if err != nil {
		return err
	}
	rp, err := relyingParty(cfg)
	if err != nil {
		return err
	}
	var stored webauthn.Credential
	if err := json.Unmarshal(c.Details, &stored); err != nil {
		return err
	}
	updated, err := passkey.Verify(rp, []byte(c.AccountID), []byte(passkey.Challenge(payload)), stored, a)
	if err != nil {
		return passkeyRefusal(err)
	}
	if c.Details, err = json.Marshal(updated); err != nil {
		return err
	}
	c.UpdatedAt = tx.Now().UTC().Truncate(time.Microsecond)
	return tx.UpdateWalletCredential(ctx, *c)
}
