package signing

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"
)

// X-Service-Signature
//
// The header value is exactly
//
//	{"v":"1","s":"<signature>"}
//
// with no white space, where <signature> is:
//
//   - an ECDSA signature on curve P-256 (secp256r1, prime256v1) over the
//     SHA-256 digest of the raw request body, byte for byte as sent;
//   - encoded as the ASN.1 DER SEQUENCE { r INTEGER, s INTEGER } (the form
//     openssl dgst -sign/-verify, Go's ecdsa.SignASN1/VerifyASN1, Java's
//     SHA256withECDSA and WebPKI use), not the 64-byte r||s form of JOSE/WebCrypto;
//   - then encoded with standard base64 (RFC 4648 section 4, alphabet "+/")
//     with "=" padding, which needs no escaping inside a JSON string.
//
// The signing key's public half is published by the API as a PEM
// "PUBLIC KEY" block (PKIX SubjectPublicKeyInfo, RFC 5280). Private keys are
// stored as PEM "PRIVATE KEY" (PKCS #8, RFC 5208).
//
// VerifyBody accepts any JSON object with the string members "v" and "s"
// (white space anywhere JSON allows it, members in any order, other members
// ignored so a later key id can be added); it rejects duplicate members and
// any "v" other than "1".
const (
	ServiceSignatureHeader  = "X-Service-Signature"
	ServiceSignatureVersion = "1"

	// maxServiceSignatureLen bounds the header value; a real one is at
	// most about 110 bytes (a DER P-256 signature is at most 72 bytes).
	maxServiceSignatureLen = 1024

	pemPublicKey    = "PUBLIC KEY"
	pemPrivateKey   = "PRIVATE KEY"
	pemECPrivateKey = "EC PRIVATE KEY"
)

// Errors returned by this file, possibly wrapped; test with errors.Is.
var (
	ErrInvalidKey                = errors.New("signing: not a P-256 ECDSA key")
	ErrMalformedServiceSignature = errors.New("signing: malformed X-Service-Signature")
	ErrUnsupportedVersion        = errors.New("signing: unsupported X-Service-Signature version")
	ErrInvalidSignature          = errors.New("signing: X-Service-Signature does not match the body")
)

// GenerateKey returns a new P-256 signing key.
func GenerateKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// EncodePrivateKeyPEM returns priv as a PEM "PRIVATE KEY" block (PKCS #8).
func EncodePrivateKeyPEM(priv *ecdsa.PrivateKey) ([]byte, error) {
	if priv == nil || !isP256(&priv.PublicKey) {
		return nil, ErrInvalidKey
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: der}), nil
}

// ParsePrivateKeyPEM reads a P-256 key from a PEM "PRIVATE KEY" (PKCS #8)
// block, or from an "EC PRIVATE KEY" (SEC 1) block as written by
// "openssl ecparam -genkey". Encrypted PEM is not supported.
func ParsePrivateKeyPEM(data []byte) (*ecdsa.PrivateKey, error) {
	block, err := decodeSinglePEM(data)
	if err != nil {
		return nil, err
	}
	var priv *ecdsa.PrivateKey
	switch block.Type {
	case pemPrivateKey:
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
		}
		var ok bool
		if priv, ok = k.(*ecdsa.PrivateKey); !ok {
			return nil, fmt.Errorf("%w: PKCS #8 key is a %T", ErrInvalidKey, k)
		}
	case pemECPrivateKey:
		if priv, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
		}
	default:
		return nil, fmt.Errorf("%w: PEM block %q, want %q", ErrInvalidKey, block.Type, pemPrivateKey)
	}
	if !isP256(&priv.PublicKey) {
		return nil, fmt.Errorf("%w: curve %s", ErrInvalidKey, priv.Curve.Params().Name)
	}
	return priv, nil
}

// EncodePublicKeyPEM returns pub as a PEM "PUBLIC KEY" block (PKIX).
func EncodePublicKeyPEM(pub *ecdsa.PublicKey) ([]byte, error) {
	if !isP256(pub) {
		return nil, ErrInvalidKey
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPublicKey, Bytes: der}), nil
}

// ParsePublicKeyPEM reads a P-256 key from a PEM "PUBLIC KEY" block (PKIX).
func ParsePublicKeyPEM(data []byte) (*ecdsa.PublicKey, error) {
	block, err := decodeSinglePEM(data)
	if err != nil {
		return nil, err
	}
	if block.Type != pemPublicKey {
		return nil, fmt.Errorf("%w: PEM block %q, want %q", ErrInvalidKey, block.Type, pemPublicKey)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	pub, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: public key is a %T", ErrInvalidKey, k)
	}
	if !isP256(pub) {
		return nil, fmt.Errorf("%w: curve %s", ErrInvalidKey, pub.Curve.Params().Name)
	}
	return pub, nil
}

// SignBody returns the X-Service-Signature header value for body.
func SignBody(priv *ecdsa.PrivateKey, body []byte) (string, error) {
	if priv == nil || !isP256(&priv.PublicKey) {
		return "", ErrInvalidKey
	}
	digest := sha256.Sum256(body)
	// Deterministic (RFC 6979: a nil random source): a fifth cheaper than
	// SignASN1's hedged nonce, whose SHA-512 DRBG is set up per signature,
	// and one body always gets one signature. It runs once per delivery.
	der, err := priv.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("signing: ECDSA: %w", err)
	}
	return `{"v":"` + ServiceSignatureVersion + `","s":"` + base64.StdEncoding.EncodeToString(der) + `"}`, nil
}

// VerifyBody checks an X-Service-Signature header value against body.
// It returns ErrInvalidKey, ErrMalformedServiceSignature,
// ErrUnsupportedVersion or ErrInvalidSignature (possibly wrapped).
func VerifyBody(pub *ecdsa.PublicKey, headerValue string, body []byte) error {
	if !isP256(pub) {
		return ErrInvalidKey
	}
	v, s, err := parseServiceSignature(headerValue)
	if err != nil {
		return err
	}
	if v != ServiceSignatureVersion {
		return fmt.Errorf("%w: %q", ErrUnsupportedVersion, v)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(sig) == 0 {
		return fmt.Errorf("%w: \"s\" is not standard padded base64", ErrMalformedServiceSignature)
	}
	digest := sha256.Sum256(body)
	if !ecdsa.VerifyASN1(pub, digest[:], sig) {
		return ErrInvalidSignature
	}
	return nil
}

// parseServiceSignature returns the "v" and "s" members of a JSON object.
func parseServiceSignature(h string) (v, s string, err error) {
	malformed := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("%w: %s", ErrMalformedServiceSignature, why)
	}
	if len(h) > maxServiceSignatureLen {
		return malformed("too long")
	}
	if strings.TrimSpace(h) == "" {
		return malformed("empty")
	}
	dec := json.NewDecoder(strings.NewReader(h))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return malformed("not a JSON object")
	}
	var haveV, haveS bool
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed("not a JSON object")
		}
		key, _ := tok.(string) // object keys are always strings
		if seen[key] {
			return malformed("duplicate member " + quoteShort(key))
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return malformed("not a JSON object")
		}
		switch key {
		case "v":
			if v, haveV = jsonString(raw); !haveV {
				return malformed(`"v" is not a string`)
			}
		case "s":
			if s, haveS = jsonString(raw); !haveS {
				return malformed(`"s" is not a string`)
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return malformed("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return malformed("data after the JSON object")
	}
	if !haveV || !haveS {
		return malformed(`want members "v" and "s"`)
	}
	return v, s, nil
}

// jsonString returns the value of raw if it is a JSON string. (Unmarshalling
// into a string would also accept null.)
func jsonString(raw json.RawMessage) (string, bool) {
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return "", false
	}
	s, ok := x.(string)
	return s, ok
}

func quoteShort(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func isP256(pub *ecdsa.PublicKey) bool {
	return pub != nil && pub.Curve == elliptic.P256()
}

// decodeSinglePEM returns the only PEM block in data, which may be
// surrounded by white space but nothing else.
func decodeSinglePEM(data []byte) (*pem.Block, error) {
	data = bytes.TrimSpace(data)
	if !bytes.HasPrefix(data, []byte("-----BEGIN ")) {
		return nil, fmt.Errorf("%w: not PEM", ErrInvalidKey)
	}
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrInvalidKey)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%w: data after the PEM block", ErrInvalidKey)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("%w: PEM headers (encrypted keys are not supported)", ErrInvalidKey)
	}
	return block, nil
}
