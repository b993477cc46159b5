package walletsig

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/big"
)

// The Bitcoin Base58 alphabet, shared by Solana and Tron.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() [256]int {
	var idx [256]int
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		idx[base58Alphabet[i]] = i
	}
	return idx
}()

var errBase58 = errors.New("walletsig: not base58")

// maxBase58Len bounds what Base58Decode accepts; decoding is quadratic and no
// address or signature comes near it.
const maxBase58Len = 256

// Base58Encode encodes b in Base58; each leading zero byte becomes a '1'.
func Base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for range zeros {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// Base58Decode decodes a Base58 string; each leading '1' becomes a zero byte.
func Base58Decode(s string) ([]byte, error) {
	if s == "" || len(s) > maxBase58Len {
		return nil, errBase58
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	for i := 0; i < len(s); i++ {
		d := base58Index[s[i]]
		if d < 0 {
			return nil, errBase58
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}

// Base58CheckEncode appends the first four bytes of SHA256(SHA256(payload))
// and encodes the result in Base58.
func Base58CheckEncode(payload []byte) string {
	sum := doubleSHA256(payload)
	return Base58Encode(append(append([]byte(nil), payload...), sum[:4]...))
}

// Base58CheckDecode decodes s and checks and strips its 4-byte checksum.
func Base58CheckDecode(s string) ([]byte, error) {
	b, err := Base58Decode(s)
	if err != nil {
		return nil, err
	}
	if len(b) < 5 {
		return nil, errors.New("walletsig: base58check value too short")
	}
	payload, check := b[:len(b)-4], b[len(b)-4:]
	sum := doubleSHA256(payload)
	if !bytes.Equal(sum[:4], check) {
		return nil, errors.New("walletsig: base58check checksum mismatch")
	}
	return payload, nil
}

func doubleSHA256(b []byte) [32]byte {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}
