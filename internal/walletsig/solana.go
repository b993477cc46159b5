package walletsig

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
)

// ParseSolanaAddress checks a Solana address: Base58 of 32 bytes. Program
// derived addresses are valid destinations although they are not Ed25519
// points, so the bytes are not required to be on the curve.
func ParseSolanaAddress(s string) ([32]byte, error) {
	var out [32]byte
	b, err := Base58Decode(s)
	if err != nil {
		return out, errors.New("must be Base58")
	}
	if len(b) != 32 {
		return out, errors.New("must decode to 32 bytes")
	}
	copy(out[:], b)
	return out, nil
}

// VerifySolana checks an Ed25519 signature (Base58, or hex with or without
// 0x) over the exact message bytes by the address's key.
func VerifySolana(address string, msg []byte, signature string) error {
	pub, err := ParseSolanaAddress(address)
	if err != nil {
		return err
	}
	sig, err := decodeSolanaSignature(strings.TrimSpace(signature))
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub[:], msg, sig) {
		return ErrMismatch
	}
	return nil
}

// decodeSolanaSignature accepts 64 bytes as 128 hex digits (optionally after
// 0x) or as Base58. The two cannot be confused: 64 bytes in Base58 take at
// most 88 characters.
func decodeSolanaSignature(s string) ([]byte, error) {
	if h := strings.TrimPrefix(s, "0x"); len(h) == 128 {
		if b, err := hex.DecodeString(h); err == nil {
			return b, nil
		}
	}
	b, err := Base58Decode(s)
	if err != nil || len(b) != ed25519.SignatureSize {
		return nil, ErrMalformed
	}
	return b, nil
}

// SolanaAddressOf is the address of an Ed25519 public key.
func SolanaAddressOf(pub ed25519.PublicKey) string { return Base58Encode(pub) }
