package walletsig

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// ParseEVMAddress checks an EVM address: "0x" and 40 hex digits. An
// all-lowercase or all-uppercase address carries no checksum; a mixed-case
// one must match its EIP-55 checksum. It returns the 20 bytes.
func ParseEVMAddress(s string) ([20]byte, error) {
	var out [20]byte
	hexPart, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return out, errors.New("must start with 0x")
	}
	if len(hexPart) != 40 {
		return out, errors.New("must be 0x followed by 40 hexadecimal digits")
	}
	b, err := hex.DecodeString(hexPart)
	if err != nil {
		return out, errors.New("must be 0x followed by 40 hexadecimal digits")
	}
	copy(out[:], b)
	if hexPart != strings.ToLower(hexPart) && hexPart != strings.ToUpper(hexPart) && ChecksumAddress(out) != s {
		return out, errors.New("mixed-case address fails its EIP-55 checksum")
	}
	return out, nil
}

// ChecksumAddress renders an address in EIP-55 mixed case: a hex letter is
// upper case when the matching nibble of keccak256(lowercase hex) is 8 or more.
func ChecksumAddress(a [20]byte) string {
	lower := hex.EncodeToString(a[:])
	hash := Keccak256([]byte(lower))
	out := []byte(lower)
	for i := range out {
		nibble := hash[i/2] >> 4
		if i%2 == 1 {
			nibble = hash[i/2] & 0x0f
		}
		if out[i] >= 'a' && nibble >= 8 {
			out[i] -= 'a' - 'A'
		}
	}
	return "0x" + string(out)
}

// EVMAddressOf derives the address of a public key: the last 20 bytes of
// keccak256 of its uncompressed X‖Y coordinates.
func EVMAddressOf(pub *secp256k1.PublicKey) [20]byte {
	var out [20]byte
	copy(out[:], Keccak256(pub.SerializeUncompressed()[1:])[12:])
	return out
}

// PersonalSignHash is the EIP-191 (version 0x45) digest wallets sign for
// personal_sign: keccak256("\x19Ethereum Signed Message:\n" + len(msg) + msg),
// the length in decimal bytes.
func PersonalSignHash(msg []byte) []byte {
	return Keccak256([]byte("\x19Ethereum Signed Message:\n"+strconv.Itoa(len(msg))), msg)
}

// VerifyEVM checks a personal_sign signature: 65 bytes r‖s‖v in hex (with or
// without 0x), v being 27/28 or 0/1, by address over msg.
func VerifyEVM(address string, msg []byte, signature string) error {
	want, err := ParseEVMAddress(address)
	if err != nil {
		return err
	}
	pub, err := recoverRSV(PersonalSignHash(msg), signature)
	if err != nil {
		return err
	}
	if EVMAddressOf(pub) != want {
		return ErrMismatch
	}
	return nil
}

// recoverRSV parses a hex r‖s‖v signature and recovers the key that made it
// over hash.
func recoverRSV(hash []byte, signature string) (*secp256k1.PublicKey, error) {
	sig, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(signature), "0x"))
	if err != nil || len(sig) != 65 {
		return nil, ErrMalformed
	}
	v := sig[64]
	if v >= 27 {
		v -= 27
	}
	if v > 1 {
		return nil, ErrMalformed
	}
	compact := make([]byte, 65)
	compact[0] = 27 + v
	copy(compact[1:], sig[:64])
	pub, _, err := ecdsa.RecoverCompact(compact, hash)
	if err != nil {
		// r or s out of range, or no point: well-formed bytes that no key
		// could have produced for this hash.
		return nil, ErrMismatch
	}
	return pub, nil
}

// SignEVM makes a personal_sign signature (r‖s‖v hex, v 27/28): what a
// wallet returns. It exists for tests and sandbox tooling.
func SignEVM(key *secp256k1.PrivateKey, msg []byte) string {
	return "0x" + hex.EncodeToString(signRSV(key, PersonalSignHash(msg)))
}

func signRSV(key *secp256k1.PrivateKey, hash []byte) []byte {
	compact := ecdsa.SignCompact(key, hash, false) // [27+recid] r s
	out := make([]byte, 65)
	copy(out, compact[1:])
	out[64] = compact[0]
	return out
}
