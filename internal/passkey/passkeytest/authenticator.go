// Package passkeytest is a software WebAuthn authenticator for tests: a
// P-256 key that answers registration ceremonies with a "none" attestation
// and authentication ceremonies with real assertions (authenticatorData,
// clientDataJSON, ECDSA signature), exactly as a browser hands them to a
// relying party. The server side is go-webauthn's, never this package's.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"

	"github.com/paymentsd/paymentsd/internal/passkey"
)

// Authenticator is one passkey on one device.
type Authenticator struct {
	RPID   string
	Origin string
	Key    *ecdsa.PrivateKey
	ID     []byte
	// Counter is the signature counter (0: the authenticator keeps none).
	Counter uint32
}

// New returns an authenticator with a fresh key and credential id.
func New(rpID, origin string) *Authenticator {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	return &Authenticator{RPID: rpID, Origin: origin, Key: k, ID: id}
}

// CredentialID is the credential id, base64url.
func (a *Authenticator) CredentialID() string { return b64(a.ID) }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// clientData is the CollectedClientData JSON of a ceremony.
func (a *Authenticator) clientData(typ string, challenge []byte) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": b64(challenge), "origin": a.Origin, "crossOrigin": false})
	return b
}

// authData is rpIdHash | flags | counter (| attested credential data).
func (a *Authenticator) authData(flags byte, attested []byte) []byte {
	rp := sha256.Sum256([]byte(a.RPID))
	out := append(rp[:], flags)
	out = binary.BigEndian.AppendUint32(out, a.Counter)
	return append(out, attested...)
}

// coseKey is the credential public key as a COSE_Key (EC2, ES256).
func (a *Authenticator) coseKey() []byte {
	pub, _ := a.Key.PublicKey.Bytes() // 04 | X | Y
	b, err := webauthncbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: pub[1:33], -3: pub[33:65]})
	if err != nil {
		panic(err)
	}
	return b
}

// Flags of authenticator data.
const (
	FlagUP = 0x01 // user present
	FlagUV = 0x04 // user verified
	FlagAT = 0x40 // attested credential data included
)

// Create answers navigator.credentials.create() for challenge.
func (a *Authenticator) Create(challenge []byte) passkey.Attestation {
	attested := make([]byte, 16) // AAGUID: zeros
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(a.ID)))
	attested = append(attested, a.ID...)
	attested = append(attested, a.coseKey()...)
	obj, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{},
		"authData": a.authData(FlagUP|FlagUV|FlagAT, attested)})
	if err != nil {
		panic(err)
	}
	return passkey.Attestation{CredentialID: a.CredentialID(), ClientDataJSON: b64(a.clientData("webauthn.create", challenge)),
		AttestationObject: b64(obj), Transports: []string{"internal", "hybrid"}}
}

// Get answers navigator.credentials.get() for challenge (the counter
// advances when the authenticator keeps one).
func (a *Authenticator) Get(challenge []byte) passkey.Assertion {
	if a.Counter > 0 {
		a.Counter++
	}
	cd := a.clientData("webauthn.get", challenge)
	ad := a.authData(FlagUP|FlagUV, nil)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.Key, digest[:])
	if err != nil {
		panic(err)
	}
	return passkey.Assertion{CredentialID: a.CredentialID(), ClientDataJSON: b64(cd), AuthenticatorData: b64(ad), Signature: b64(sig)}
}
