package walletsig

import "golang.org/x/crypto/sha3"

// Keccak256 is the original Keccak-256 (not NIST SHA3-256) that Ethereum and
// Tron use, over the concatenation of parts.
func Keccak256(parts ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}
