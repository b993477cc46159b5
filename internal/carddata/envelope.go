package carddata

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// PINEnvelope is a client-encrypted PIN block, as the hosted PIN page (and a
// platform calling set-pin) sends it:
//
//   - EphemeralPublicKey: the client's one-time P-256 public key,
//     uncompressed (65 bytes), base64url without padding;
//   - IV: 12 random bytes, base64url;
//   - Ciphertext: AES-256-GCM of the 16-byte ISO 9564-1 format 4 plain PIN
//     field (EncodePINField), base64url.
//
// The AES key is HKDF-SHA256 of the ECDH shared secret between the ephemeral
// key and the service's PIN transport key, salt = the ephemeral public key,
// info = PINEnvelopeInfo; the associated data is the card id, so an envelope
// made for one card does not open for another. Every step exists in
// WebCrypto (ECDH, HKDF, AES-GCM), so the browser builds it without any
// library, and the PIN exists in clear only in the page and, briefly, in the
// service while its PVV is computed.
type PINEnvelope struct {
	EphemeralPublicKey string `json:"ephemeralPublicKey"`
	IV                 string `json:"iv"`
	Ciphertext         string `json:"ciphertext"`
}

// PINEnvelopeInfo is the HKDF info of PIN envelopes (version 1).
const PINEnvelopeInfo = "paymentsd-pin-block-v1"

// ErrBadEnvelope: a PIN envelope is malformed or does not open.
var ErrBadEnvelope = errors.New("carddata: the encrypted PIN block does not open (malformed, altered, for another card, or for another key)")

var b64 = base64.RawURLEncoding

// envelopeAEAD derives the AES-256-GCM of an envelope from the two sides'
// keys.
func envelopeAEAD(priv *ecdh.PrivateKey, peer *ecdh.PublicKey, ephemeral []byte) (cipher.AEAD, error) {
	shared, err := priv.ECDH(peer)
	if err != nil {
		return nil, ErrBadEnvelope
	}
	key, err := hkdf.Key(sha256.New, shared, ephemeral, PINEnvelopeInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// SealPIN makes the envelope of pin for a card, to the service's PIN
// transport public key (what the browser does; Go clients and tests use it).
func SealPIN(transport *ecdh.PublicKey, cardID, pin string) (PINEnvelope, error) {
	field, err := EncodePINField(pin, nil)
	if err != nil {
		return PINEnvelope{}, err
	}
	eph, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return PINEnvelope{}, err
	}
	ephPub := eph.PublicKey().Bytes()
	aead, err := envelopeAEAD(eph, transport, ephPub)
	if err != nil {
		return PINEnvelope{}, err
	}
	iv := make([]byte, aead.NonceSize())
	if _, err := rand.Read(iv); err != nil {
		return PINEnvelope{}, err
	}
	ct := aead.Seal(nil, iv, field[:], []byte(cardID))
	return PINEnvelope{EphemeralPublicKey: b64.EncodeToString(ephPub), IV: b64.EncodeToString(iv),
		Ciphertext: b64.EncodeToString(ct)}, nil
}

// OpenPIN returns the PIN of an envelope made for cardID to the transport
// key.
func OpenPIN(transport *ecdh.PrivateKey, cardID string, e PINEnvelope) (string, error) {
	ephPub, err1 := b64.DecodeString(e.EphemeralPublicKey)
	iv, err2 := b64.DecodeString(e.IV)
	ct, err3 := b64.DecodeString(e.Ciphertext)
	if err := errors.Join(err1, err2, err3); err != nil || len(iv) != 12 || len(ct) != 16+16 {
		return "", ErrBadEnvelope
	}
	peer, err := ecdh.P256().NewPublicKey(ephPub)
	if err != nil {
		return "", ErrBadEnvelope
	}
	aead, err := envelopeAEAD(transport, peer, ephPub)
	if err != nil {
		return "", ErrBadEnvelope
	}
	field, err := aead.Open(nil, iv, ct, []byte(cardID))
	if err != nil {
		return "", ErrBadEnvelope
	}
	pin, err := DecodePINField(field)
	if err != nil {
		return "", ErrBadEnvelope
	}
	return pin, nil
}
