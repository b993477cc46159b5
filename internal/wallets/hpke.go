package wallets

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hpke"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// HPKE (RFC 9180) suite of every sealed exchange with clients:
// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM, base mode, empty AAD,
// with an info string per use.
var (
	hpkeKEM  = hpke.DHKEM(ecdh.P256())
	hpkeKDF  = hpke.HKDFSHA256()
	hpkeAEAD = hpke.AES256GCM()
)

// Info strings.
const (
	InfoOTP    = "paymentsd-otp-bundle-v1"
	InfoExport = "paymentsd-wallet-export-v1"
	InfoLegacy = "paymentsd-session-key-v1"
)

// SealedBundle is the JSON form of one HPKE message: the encapsulated key
// (uncompressed P-256 point) and the ciphertext, both hex.
type SealedBundle struct {
	EncappedPublic string `json:"encappedPublic"`
	Ciphertext     string `json:"ciphertext"`
}

// maxBundleCiphertext bounds a bundle's ciphertext (an OTP attempt is about
// 120 bytes; export carries a key and ids).
const maxBundleCiphertext = 4096

// ParseSealedBundle parses a bundle strictly: exactly the two fields, hex,
// a 65-byte uncompressed encapsulated key, a ciphertext of at least the
// AEAD tag and at most maxBundleCiphertext bytes.
func ParseSealedBundle(s string) (enc, ct []byte, err error) {
	if len(s) > 2*maxBundleCiphertext+256 {
		return nil, nil, errors.New("too long")
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var b SealedBundle
	if err := dec.Decode(&b); err != nil {
		return nil, nil, errors.New("not a JSON object with encappedPublic and ciphertext")
	}
	if dec.More() {
		return nil, nil, errors.New("trailing data")
	}
	enc, err = hex.DecodeString(b.EncappedPublic)
	if err != nil || len(enc) != 65 || enc[0] != 4 {
		return nil, nil, errors.New("encappedPublic must be an uncompressed P-256 point in hex (130 characters, 04 first)")
	}
	if _, err := ecdh.P256().NewPublicKey(enc); err != nil {
		return nil, nil, errors.New("encappedPublic is not a point of P-256")
	}
	ct, err = hex.DecodeString(b.Ciphertext)
	if err != nil || len(ct) < 16 || len(ct) > maxBundleCiphertext {
		return nil, nil, errors.New("ciphertext must be hex of 16 to 4096 bytes")
	}
	return enc, ct, nil
}

// hpkeSeal seals plaintext to an uncompressed or compressed P-256 public
// key and returns the bundle JSON.
func hpkeSeal(to *ecdh.PublicKey, info string, plaintext []byte) (string, error) {
	pk, err := hpke.NewDHKEMPublicKey(to)
	if err != nil {
		return "", err
	}
	enc, sender, err := hpke.NewSender(pk, hpkeKDF, hpkeAEAD, []byte(info))
	if err != nil {
		return "", err
	}
	ct, err := sender.Seal(nil, plaintext)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(SealedBundle{EncappedPublic: hex.EncodeToString(enc), Ciphertext: hex.EncodeToString(ct)})
	return string(b), err
}

// hpkeOpen opens a parsed bundle with a private key.
func hpkeOpen(priv *ecdh.PrivateKey, info string, enc, ct []byte) ([]byte, error) {
	k, err := hpke.NewDHKEMPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	r, err := hpke.NewRecipient(enc, k, hpkeKDF, hpkeAEAD, []byte(info))
	if err != nil {
		return nil, fmt.Errorf("hpke: %w", err)
	}
	return r.Open(nil, ct)
}

// OpenBundle opens a bundle JSON with priv: what a client does with export
// and legacy session-key bundles (tests and the worked example use it).
func OpenBundle(priv *ecdh.PrivateKey, info, bundle string) ([]byte, error) {
	enc, ct, err := ParseSealedBundle(bundle)
	if err != nil {
		return nil, err
	}
	return hpkeOpen(priv, info, enc, ct)
}

// SealBundle seals plaintext to a public key as bundle JSON: what a client
// does for encryptedOtpBundle.
func SealBundle(to *ecdh.PublicKey, info string, plaintext []byte) (string, error) {
	return hpkeSeal(to, info, plaintext)
}

// TargetBundle is the otpEncryptionTargetBundle: the public key an OTP
// attempt is sealed to (uncompressed P-256, hex).
type TargetBundle struct {
	Version      string `json:"version"`
	TargetPublic string `json:"targetPublic"`
}

// ParseTargetBundle parses an otpEncryptionTargetBundle (clients do).
func ParseTargetBundle(s string) (*ecdh.PublicKey, error) {
	var b TargetBundle
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.Version != "v1" {
		return nil, errors.New("not a v1 target bundle")
	}
	raw, err := hex.DecodeString(b.TargetPublic)
	if err != nil {
		return nil, errors.New("targetPublic is not hex")
	}
	return ecdh.P256().NewPublicKey(raw)
}
