package walletsig

import (
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// tronPrefix is the first byte of every Tron mainnet address.
const tronPrefix = 0x41

// ParseTronAddress checks a Tron address: Base58Check of 0x41 followed by
// 20 bytes (it starts with T). It returns the 21 bytes.
func ParseTronAddress(s string) ([21]byte, error) {
	var out [21]byte
	b, err := Base58CheckDecode(s)
	if err != nil {
		return out, errors.New("must be a Base58Check Tron address such as TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL")
	}
	if len(b) != 21 || b[0] != tronPrefix {
		return out, errors.New("must encode 0x41 followed by 20 bytes")
	}
	copy(out[:], b)
	return out, nil
}

// TronAddressOf derives the Base58Check address of a public key.
func TronAddressOf(pub *secp256k1.PublicKey) string {
	evm := EVMAddressOf(pub)
	return Base58CheckEncode(append([]byte{tronPrefix}, evm[:]...))
}

// TronMessageHash is the digest TronWeb's signMessageV2 signs:
// keccak256("\x19TRON Signed Message:\n" + len(msg) + msg).
func TronMessageHash(msg []byte) []byte {
	return Keccak256([]byte("\x19TRON Signed Message:\n"+strconv.Itoa(len(msg))), msg)
}

// VerifyTron checks a signMessageV2 signature (65 bytes r‖s‖v in hex) by
// address over msg.
func VerifyTron(address string, msg []byte, signature string) error {
	want, err := ParseTronAddress(address)
	if err != nil {
		return err
	}
	pub, err := recoverRSV(TronMessageHash(msg), signature)
	if err != nil {
		return err
	}
	if evm := EVMAddressOf(pub); want[0] != tronPrefix || [20]byte(want[1:]) != evm {
		return ErrMismatch
	}
	return nil
}

// SignTron makes a signMessageV2 signature, for tests and sandbox tooling.
func SignTron(key *secp256k1.PrivateKey, msg []byte) string {
	return "0x" + hex.EncodeToString(signRSV(key, TronMessageHash(msg)))
}
