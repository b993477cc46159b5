// Package passkey is the WebAuthn glue of the service: it turns the API's
// attestation and assertion objects (base64url strings, as browsers'
// PublicKeyCredential JSON carries them) into go-webauthn's types and runs
// go-webauthn's registration and assertion checks against a relying party
// (RP id and allowed origins). It never checks a ceremony by hand: every
// verification goes through webauthn.CreateCredential / ValidateLogin.
// Embedded-wallet PASSKEY credentials use it; SCA passkey factors can too.
package passkey

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"
)

// MaxField bounds each base64url field (attestation objects with
// certificate chains are a few KB).
const MaxField = 16 << 10

// RelyingParty is who the ceremonies are for: the RP id (a domain) and the
// origins a ceremony may run on.
type RelyingParty struct {
	ID      string
	Origins []string
}

func (rp RelyingParty) webauthn() (*webauthn.WebAuthn, error) {
	if rp.ID == "" || len(rp.Origins) == 0 {
		return nil, ErrNoRelyingParty
	}
	return webauthn.New(&webauthn.Config{RPID: rp.ID, RPDisplayName: rp.ID, RPOrigins: rp.Origins})
}

// ErrNoRelyingParty: the relying party is not configured.
var ErrNoRelyingParty = errors.New("passkey: no relying party id and origins configured")

// Attestation is a registration response (navigator.credentials.create()).
type Attestation struct {
	CredentialID      string   `json:"credentialId"`
	ClientDataJSON    string   `json:"clientDataJson"`
	AttestationObject string   `json:"attestationObject"`
	Transports        []string `json:"transports,omitempty"`
}

// Assertion is an authentication response (navigator.credentials.get()).
type Assertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJson"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle,omitempty"`
}

// FieldError names the field of a malformed input.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Reason }

// DecodeB64URL decodes a base64url field, with or without padding.
func DecodeB64URL(field, s string) ([]byte, error) {
	if s == "" {
		return nil, &FieldError{field, "is required"}
	}
	if len(s) > MaxField {
		return nil, &FieldError{field, fmt.Sprintf("is longer than %d characters", MaxField)}
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, &FieldError{field, "is not base64url"}
	}
	return b, nil
}

// Parse decodes an attestation into go-webauthn's parsed form.
func (a Attestation) Parse() (*protocol.ParsedCredentialCreationData, error) {
	raw, err := DecodeB64URL("attestation.credentialId", a.CredentialID)
	if err != nil {
		return nil, err
	}
	cdj, err := DecodeB64URL("attestation.clientDataJson", a.ClientDataJSON)
	if err != nil {
		return nil, err
	}
	ao, err := DecodeB64URL("attestation.attestationObject", a.AttestationObject)
	if err != nil {
		return nil, err
	}
	ccr := protocol.CredentialCreationResponse{
		PublicKeyCredential: protocol.PublicKeyCredential{
			Credential: protocol.Credential{ID: base64.RawURLEncoding.EncodeToString(raw), Type: "public-key"}, RawID: raw},
		AttestationResponse: protocol.AuthenticatorAttestationResponse{
			AuthenticatorResponse: protocol.AuthenticatorResponse{ClientDataJSON: cdj}, AttestationObject: ao, Transports: a.Transports},
	}
	p, err := ccr.Parse()
	if err != nil {
		return nil, &FieldError{"attestation", "does not parse as a WebAuthn attestation: " + describe(err)}
	}
	return p, nil
}

// Parse decodes an assertion into go-webauthn's parsed form. The user
// handle is not passed on: the credential id binds the assertion to its
// owner (the allowed-credential check).
func (a Assertion) Parse() (*protocol.ParsedCredentialAssertionData, error) {
	raw, err := DecodeB64URL("assertion.credentialId", a.CredentialID)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{"clientDataJson": a.ClientDataJSON, "authenticatorData": a.AuthenticatorData, "signature": a.Signature}
	dec := map[string][]byte{}
	for _, name := range []string{"clientDataJson", "authenticatorData", "signature"} {
		if dec[name], err = DecodeB64URL("assertion."+name, fields[name]); err != nil {
			return nil, err
		}
	}
	car := protocol.CredentialAssertionResponse{
		PublicKeyCredential: protocol.PublicKeyCredential{
			Credential: protocol.Credential{ID: base64.RawURLEncoding.EncodeToString(raw), Type: "public-key"}, RawID: raw},
		AssertionResponse: protocol.AuthenticatorAssertionResponse{
			AuthenticatorResponse: protocol.AuthenticatorResponse{ClientDataJSON: dec["clientDataJson"]},
			AuthenticatorData:     dec["authenticatorData"], Signature: dec["signature"]},
	}
	p, err := car.Parse()
	if err != nil {
		return nil, &FieldError{"assertion", "does not parse as a WebAuthn assertion: " + describe(err)}
	}
	return p, nil
}

// user is the WebAuthn user of one ceremony: an opaque id and its
// credentials.
type user struct {
	id    []byte
	creds []webauthn.Credential
}

func (u user) WebAuthnID() []byte                         { return u.id }
func (u user) WebAuthnName() string                       { return hex.EncodeToString(u.id) }
func (u user) WebAuthnDisplayName() string                { return hex.EncodeToString(u.id) }
func (u user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// credParams are the credential algorithms accepted: ES256, EdDSA, RS256.
var credParams = []protocol.CredentialParameter{
	{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256},
	{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgEdDSA},
	{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgRS256},
}

// Register verifies a registration ceremony whose WebAuthn challenge was
// challenge (the raw bytes) for the relying party, and returns the
// credential to keep. Attestation statements are verified as their format
// defines ("none" carries none).
func Register(rp RelyingParty, userID, challenge []byte, a Attestation) (webauthn.Credential, error) {
	w, err := rp.webauthn()
	if err != nil {
		return webauthn.Credential{}, err
	}
	parsed, err := a.Parse()
	if err != nil {
		return webauthn.Credential{}, err
	}
	session := webauthn.SessionData{Challenge: base64.RawURLEncoding.EncodeToString(challenge), UserID: userID,
		RelyingPartyID: rp.ID, Expires: time.Now().Add(time.Minute), CredParams: credParams}
	c, err := w.CreateCredential(user{id: userID}, session, parsed)
	if err != nil {
		return webauthn.Credential{}, &Refused{describe(err)}
	}
	return *c, nil
}

// Verify verifies an assertion of the stored credential over challenge
// (the raw bytes) and returns the credential updated (sign counter, flags).
func Verify(rp RelyingParty, userID, challenge []byte, stored webauthn.Credential, a Assertion) (webauthn.Credential, error) {
	w, err := rp.webauthn()
	if err != nil {
		return webauthn.Credential{}, err
	}
	parsed, err := a.Parse()
	if err != nil {
		return webauthn.Credential{}, err
	}
	session := webauthn.SessionData{Challenge: base64.RawURLEncoding.EncodeToString(challenge), UserID: userID,
		RelyingPartyID: rp.ID, AllowedCredentialIDs: [][]byte{stored.ID}, Expires: time.Now().Add(time.Minute)}
	c, err := w.ValidateLogin(user{id: userID, creds: []webauthn.Credential{stored}}, session, parsed)
	if err != nil {
		return webauthn.Credential{}, &Refused{describe(err)}
	}
	if c.Authenticator.CloneWarning {
		return webauthn.Credential{}, &Refused{"the authenticator's signature counter went backwards (a cloned authenticator?)"}
	}
	return *c, nil
}

// Refused is a ceremony that parsed but does not verify.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return "passkey: " + r.Reason }

// describe is a protocol error's details (what a client can act on).
func describe(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		if pe.DevInfo != "" {
			return pe.Details + ": " + pe.DevInfo
		}
		return pe.Details
	}
	return err.Error()
}

// Challenge is the challenge of a session-creation body: the lowercase hex
// SHA-256 of its bytes. The WebAuthn challenge is this string's UTF-8 bytes.
func Challenge(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])
}
