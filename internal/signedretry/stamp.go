package signedretry

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
)

// Scheme is the only stamp scheme: ECDSA on P-256 over SHA-256 of the
// payload's exact UTF-8 bytes, signature DER-encoded.
const Scheme = "SIGNATURE_SCHEME_API_P256"

// MaxStampLength bounds the header (a stamp is about 300 characters).
const MaxStampLength = 1024

// Stamp is a parsed Service-Wallet-Signature header: base64url (padding
// optional) of the JSON object {"publicKey", "scheme", "signature"} where
// publicKey is the signer's compressed SEC1 P-256 key in hex (66
// characters) and signature the DER ECDSA signature in hex.
type Stamp struct {
	PublicKey string // compressed, lowercase hex
	Key       *ecdsa.PublicKey
	Signature []byte
}

type stampJSON struct {
	PublicKey string `json:"publicKey"`
	Scheme    string `json:"scheme"`
	Signature string `json:"signature"`
}

// ParseStamp parses a header value. Any deviation (encoding, unknown or
// missing fields, another scheme, a key that is not a compressed P-256
// point, a signature that is not hex DER) is an error: the caller answers
// WALLET_SIGNATURE_MALFORMED.
func ParseStamp(header string) (Stamp, error) {
	if header == "" || len(header) > MaxStampLength {
		return Stamp{}, errors.New("empty or too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(header, "="))
	if err != nil {
		return Stamp{}, errors.New("not base64url")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s stampJSON
	if err := dec.Decode(&s); err != nil {
		return Stamp{}, errors.New("not the stamp's JSON object")
	}
	if dec.More() {
		return Stamp{}, errors.New("trailing data after the stamp")
	}
	if s.Scheme != Scheme {
		return Stamp{}, errors.New("scheme must be " + Scheme)
	}
	key, err := parseCompressed(s.PublicKey)
	if err != nil {
		return Stamp{}, err
	}
	sig, err := hex.DecodeString(s.Signature)
	if err != nil || len(sig) < 8 || len(sig) > 72 || sig[0] != 0x30 {
		return Stamp{}, errors.New("signature must be a DER ECDSA signature in hex")
	}
	return Stamp{PublicKey: strings.ToLower(s.PublicKey), Key: key, Signature: sig}, nil
}

func parseCompressed(s string) (*ecdsa.PublicKey, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 33 || (b[0] != 2 && b[0] != 3) {
		return nil, errors.New("publicKey must be a compressed P-256 key in hex (66 characters, 02 or 03 first)")
	}
	x, y := elliptic.UnmarshalCompressed(elliptic.P256(), b)
	if x == nil {
		return nil, errors.New("publicKey is not a point of P-256")
	}
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), elliptic.Marshal(elliptic.P256(), x, y)) //nolint:staticcheck // re-encoding a checked point
}

// Verify reports whether the stamp signs payload.
func (s Stamp) Verify(payload string) bool {
	sum := sha256.Sum256([]byte(payload))
	return ecdsa.VerifyASN1(s.Key, sum[:], s.Signature)
}

// Sign makes a stamp over payload with key: what a client does. The tests
// and the documentation's worked example use it.
func Sign(key *ecdsa.PrivateKey, payload string) (string, error) {
	sum := sha256.Sum256([]byte(payload))
	sig, err := ecdsa.SignASN1(randReader, key, sum[:])
	if err != nil {
		return "", err
	}
	return Encode(key.Public().(*ecdsa.PublicKey), sig)
}

// Encode builds the header value from a public key and a DER signature.
func Encode(pub *ecdsa.PublicKey, sig []byte) (string, error) {
	b, err := pub.Bytes()
	if err != nil {
		return "", err
	}
	c := make([]byte, 33)
	c[0] = 2 | b[64]&1
	copy(c[1:], b[1:33])
	j, err := json.Marshal(stampJSON{PublicKey: hex.EncodeToString(c), Scheme: Scheme, Signature: hex.EncodeToString(sig)})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(j), nil
}
