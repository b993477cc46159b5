// Package scapasskey is the PASSKEY factor of strong customer
// authentication (package sca): WebAuthn registration and assertion
// ceremonies with go-webauthn, under the relying party the platform
// configures (GET/PATCH /sca/settings). It keeps no state: the caller
// stores the ceremony's session and the registered credential (JSON) and
// hands them back. An assertion for a payout is made over a challenge the
// caller chooses (the payout's binding), so the signature itself links the
// payee and amount (dynamic linking).
package scapasskey

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Config is the relying party: its id (a domain) and the origins the
// ceremonies may run on.
type Config struct {
	RPID    string
	Origins []string
}

// ErrNotConfigured: the platform has set no relying party.
var ErrNotConfigured = errors.New("scapasskey: no passkey relying party configured")

// ErrOrigin: the origin is not one of the configured ones.
var ErrOrigin = errors.New("scapasskey: origin not allowed")

func (c Config) webauthn(origin string) (*webauthn.WebAuthn, error) {
	if c.RPID == "" || len(c.Origins) == 0 {
		return nil, ErrNotConfigured
	}
	origins := c.Origins
	if origin != "" {
		if !slices.Contains(c.Origins, origin) {
			return nil, ErrOrigin
		}
		origins = []string{origin}
	}
	return webauthn.New(&webauthn.Config{RPID: c.RPID, RPDisplayName: c.RPID, RPOrigins: origins})
}

// user is the customer as WebAuthn sees it.
type user struct {
	id    string
	creds []webauthn.Credential
}

func (u user) WebAuthnID() []byte                         { return []byte(u.id) }
func (u user) WebAuthnName() string                       { return u.id }
func (u user) WebAuthnDisplayName() string                { return u.id }
func (u user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// Begin is a started ceremony: the options for the device and the session
// to keep until it finishes.
type Begin struct {
	Options json.RawMessage
	Session json.RawMessage
}

// BeginRegistration starts registering a passkey for customerID.
func BeginRegistration(c Config, customerID string) (Begin, error) {
	w, err := c.webauthn("")
	if err != nil {
		return Begin{}, err
	}
	creation, session, err := w.BeginRegistration(user{id: customerID})
	if err != nil {
		return Begin{}, err
	}
	return begin(creation.Response, session)
}

func begin(options any, session *webauthn.SessionData) (Begin, error) {
	o, err := json.Marshal(options)
	if err != nil {
		return Begin{}, err
	}
	s, err := json.Marshal(session)
	return Begin{Options: o, Session: s}, err
}

// FinishRegistration checks the device's credential (produced on origin)
// against the session and returns the credential to store and its id.
func FinishRegistration(c Config, customerID string, session, credential json.RawMessage, origin string) (json.RawMessage, []byte, error) {
	w, err := c.webauthn(origin)
	if err != nil {
		return nil, nil, err
	}
	var sd webauthn.SessionData
	if err := json.Unmarshal(session, &sd); err != nil {
		return nil, nil, fmt.Errorf("scapasskey: stored session: %w", err)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(credential)
	if err != nil {
		return nil, nil, err
	}
	cred, err := w.CreateCredential(user{id: customerID}, sd, parsed)
	if err != nil {
		return nil, nil, err
	}
	out, err := json.Marshal(cred)
	return out, cred.ID, err
}

// BeginAssertion starts an assertion by the customer's stored credential;
// challenge, when given, is the challenge the device signs (dynamic linking).
func BeginAssertion(c Config, customerID string, credential json.RawMessage, challenge []byte) (Begin, error) {
	w, err := c.webauthn("")
	if err != nil {
		return Begin{}, err
	}
	u, err := userWith(customerID, credential)
	if err != nil {
		return Begin{}, err
	}
	var opts []webauthn.LoginOption
	if challenge != nil {
		opts = append(opts, webauthn.WithChallenge(challenge))
	}
	assertion, session, err := w.BeginLogin(u, opts...)
	if err != nil {
		return Begin{}, err
	}
	return begin(assertion.Response, session)
}

func userWith(customerID string, credential json.RawMessage) (user, error) {
	var cred webauthn.Credential
	if err := json.Unmarshal(credential, &cred); err != nil {
		return user{}, fmt.Errorf("scapasskey: stored credential: %w", err)
	}
	return user{id: customerID, creds: []webauthn.Credential{cred}}, nil
}

// FinishAssertion checks an assertion made on origin against the session
// and returns the credential updated (its signature counter) to store.
func FinishAssertion(c Config, customerID string, credential, session, assertion json.RawMessage, origin string) (json.RawMessage, error) {
	w, err := c.webauthn(origin)
	if err != nil {
		return nil, err
	}
	u, err := userWith(customerID, credential)
	if err != nil {
		return nil, err
	}
	var sd webauthn.SessionData
	if err := json.Unmarshal(session, &sd); err != nil {
		return nil, fmt.Errorf("scapasskey: stored session: %w", err)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(assertion)
	if err != nil {
		return nil, err
	}
	cred, err := w.ValidateLogin(u, sd, parsed)
	if err != nil {
		return nil, err
	}
	return json.Marshal(cred)
}
