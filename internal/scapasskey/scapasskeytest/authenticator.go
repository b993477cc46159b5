// Package scapasskeytest is a software WebAuthn authenticator for tests: it
// answers registration options with a "none"-attested P-256 credential and
// assertion options with a signature, as a device would.
package scapasskeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// Authenticator holds one credential.
type Authenticator struct {
	key     *ecdsa.PrivateKey
	credID  []byte
	userID  []byte
	rpID    string
	counter uint32
}

// New makes an authenticator with a fresh key.
func New() (*Authenticator, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	return &Authenticator{key: key, credID: id}, nil
}

var b64 = base64.RawURLEncoding

// options reads what a ceremony's options (publicKey wrapper or not) carry.
type options struct {
	PublicKey *options `json:"publicKey"`
	Challenge string   `json:"challenge"`
	RP        *struct {
		ID string `json:"id"`
	} `json:"rp"`
	RPID string `json:"rpId"`
	User *struct {
		ID string `json:"id"`
	} `json:"user"`
}

func readOptions(raw []byte) (options, error) {
	var o options
	if err := json.Unmarshal(raw, &o); err != nil {
		return o, err
	}
	if o.PublicKey != nil {
		return *o.PublicKey, nil
	}
	return o, nil
}

func clientData(typ, challenge, origin string) []byte {
	b, _ := json.Marshal(map[string]string{"type": typ, "challenge": challenge, "origin": origin})
	return b
}

func (a *Authenticator) authData(flags byte, attested []byte) []byte {
	h := sha256.Sum256([]byte(a.rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, a.counter)
	return append(out, attested...)
}

// Register answers registration options made on origin with a credential
// (the JSON a browser's navigator.credentials.create gives).
func (a *Authenticator) Register(rawOptions []byte, origin string) (json.RawMessage, error) {
	o, err := readOptions(rawOptions)
	if err != nil || o.RP == nil || o.User == nil {
		return nil, fmt.Errorf("scapasskeytest: registration options %s: %v", rawOptions, err)
	}
	a.rpID = o.RP.ID
	if a.userID, err = b64.DecodeString(o.User.ID); err != nil {
		return nil, err
	}
	pub := a.key.PublicKey
	x, y := make([]byte, 32), make([]byte, 32)
	pub.X.FillBytes(x)
	pub.Y.FillBytes(y)
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: y})
	if err != nil {
		return nil, err
	}
	attested := make([]byte, 16) // AAGUID zero
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(a.credID)))
	attested = append(append(attested, a.credID...), cose...)
	ao, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{},
		"authData": a.authData(0x45, attested)}) // UP, UV, AT
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"id": b64.EncodeToString(a.credID), "rawId": b64.EncodeToString(a.credID),
		"type": "public-key", "response": map[string]string{
			"clientDataJSON":    b64.EncodeToString(clientData("webauthn.create", o.Challenge, origin)),
			"attestationObject": b64.EncodeToString(ao)}})
}

// Assert answers assertion options made on origin with a signed assertion
// (the JSON of navigator.credentials.get).
func (a *Authenticator) Assert(rawOptions []byte, origin string) (json.RawMessage, error) {
	o, err := readOptions(rawOptions)
	if err != nil {
		return nil, err
	}
	a.counter++
	ad := a.authData(0x05, nil) // UP, UV
	cd := clientData("webauthn.get", o.Challenge, origin)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"id": b64.EncodeToString(a.credID), "rawId": b64.EncodeToString(a.credID),
		"type": "public-key", "response": map[string]string{
			"clientDataJSON":    b64.EncodeToString(cd),
			"authenticatorData": b64.EncodeToString(ad),
			"signature":         b64.EncodeToString(sig),
			"userHandle":        b64.EncodeToString(a.userID)}})
}
