package walletsig

import (
	"errors"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// sparkNetworks maps the human-readable part of a Spark address to its
// network: the current prefixes and the shorter ones of earlier wallets,
// which remain valid.
var sparkNetworks = map[string]string{
	"spark": "mainnet", "sparkt": "testnet", "sparkrt": "regtest", "sparks": "signet", "sparkl": "local",
	"sp": "mainnet", "spt": "testnet", "sprt": "regtest", "sps": "signet", "spl": "local",
}

// SparkAddress is a decoded Spark address.
type SparkAddress struct {
	Network string
	// IdentityKey is the wallet's 33-byte compressed secp256k1 identity
	// public key.
	IdentityKey []byte
}

// ParseSparkAddress decodes a Spark address: Bech32m with a spark prefix
// (spark, sparkt, sparkrt, sparks, sparkl, or the earlier sp, spt, sprt,
// sps, spl),
// whose data is a protobuf message carrying the identity public key as
// field 1 (33 bytes, a compressed secp256k1 point). Other fields may follow
// and are skipped.
func ParseSparkAddress(s string) (SparkAddress, error) {
	hrp, words, variant, err := DecodeBech32(s)
	if err != nil {
		return SparkAddress{}, errors.New("is not a bech32m string with a valid checksum")
	}
	network, ok := sparkNetworks[hrp]
	if !ok {
		return SparkAddress{}, errors.New("must start with spark1 (or another Spark network prefix such as sparkt1 or sparkrt1)")
	}
	if variant != Bech32m {
		return SparkAddress{}, errors.New("must use the bech32m checksum")
	}
	b, err := convertBits(words, 5, 8, false)
	if err != nil {
		return SparkAddress{}, errors.New("has malformed data")
	}
	var key []byte
	for len(b) > 0 {
		tag, n := uvarint(b)
		if n <= 0 {
			return SparkAddress{}, errors.New("has malformed data")
		}
		b = b[n:]
		field, wire := tag>>3, tag&7
		switch wire {
		case 0:
			if _, n = uvarint(b); n <= 0 {
				return SparkAddress{}, errors.New("has malformed data")
			}
			b = b[n:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return SparkAddress{}, errors.New("has malformed data")
			}
			val := b[n : n+int(l)]
			b = b[n+int(l):]
			if field == 1 {
				key = val
			}
		default:
			return SparkAddress{}, errors.New("has malformed data")
		}
	}
	if len(key) != 33 {
		return SparkAddress{}, errors.New("does not carry a 33-byte identity public key")
	}
	if _, err := secp256k1.ParsePubKey(key); err != nil {
		return SparkAddress{}, errors.New("carries an identity key that is not a secp256k1 point")
	}
	return SparkAddress{Network: network, IdentityKey: key}, nil
}

// uvarint reads a protobuf varint; n <= 0 when malformed.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

// EncodeSparkAddress encodes an identity key as a Spark address of network
// hrp (spark, sparkt…), for tests and sandbox tooling.
func EncodeSparkAddress(hrp string, identityKey []byte) string {
	payload := append([]byte{0x0a, byte(len(identityKey))}, identityKey...)
	return EncodeBech32(hrp, payload, Bech32m)
}

// EncodeBech32 encodes bytes under hrp with the given checksum variant.
func EncodeBech32(hrp string, payload []byte, variant uint32) string {
	words, _ := convertBits(payload, 8, 5, true)
	return encodeWords(hrp, words, variant)
}
