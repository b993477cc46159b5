package wallets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// Sealer encrypts secrets at rest: Seal binds the ciphertext to ad
// (associated data, here the wallet's id and the secret's purpose), and Open
// refuses a ciphertext presented with other associated data. The service
// seals wallet signing keys, delegated keys and legacy session keys with it.
//
// The server wires the project's key-encryption package here. Until then
// (and in tests) NewLocalSealer is the default: see its caveat.
type Sealer interface {
	Seal(plaintext, ad []byte) ([]byte, error)
	Open(sealed, ad []byte) ([]byte, error)
}

// localSealer is AES-256-GCM under a key derived from one secret, with a
// random 96-bit nonce prefixed to each ciphertext.
type localSealer struct{ aead cipher.AEAD }

// NewLocalSealer returns a Sealer keyed by secret (at least 16 bytes). It is
// the default the server uses when no other Sealer is configured, keyed by a
// random secret kept in the database's server_secrets table. That protects a
// copy of the wallet tables alone, not a copy of the whole database: a
// production deployment should configure a key-encryption key held outside
// the database.
func NewLocalSealer(secret []byte) (Sealer, error) {
	if len(secret) < 16 {
		return nil, errors.New("wallets: sealer secret shorter than 16 bytes")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "paymentsd wallet sealing v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return localSealer{aead: aead}, nil
}

func (s localSealer) Seal(plaintext, ad []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, plaintext, ad), nil
}

func (s localSealer) Open(sealed, ad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errors.New("wallets: sealed value too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], ad)
}
