package carddata

import (
	"crypto/des"
	"encoding/hex"
	"errors"
	"fmt"
)

// KeyPair is a double-length DES key: the two 64-bit halves (A, B) of a card
// verification key or a PIN verification key. Parity bits are ignored, as
// DES ignores them.
type KeyPair struct{ A, B [8]byte }

// ParseKeyPair reads a key pair written as 32 hex digits (A then B).
func ParseKeyPair(hexKey string) (KeyPair, error) {
	b, err := hex.DecodeString(hexKey)
	if err != nil || len(b) != 16 {
		return KeyPair{}, errors.New("carddata: a key pair is 32 hex digits")
	}
	var k KeyPair
	copy(k.A[:], b[:8])
	copy(k.B[:], b[8:])
	return k, nil
}

// ede is two-key triple DES (encrypt A, decrypt B, encrypt A) of one block.
func (k KeyPair) ede(block [8]byte) [8]byte {
	var key [24]byte
	copy(key[:8], k.A[:])
	copy(key[8:16], k.B[:])
	copy(key[16:], k.A[:])
	c, err := des.NewTripleDESCipher(key[:])
	if err != nil { // only for a wrong key length, which [24]byte rules out
		panic(err)
	}
	var out [8]byte
	c.Encrypt(out[:], block[:])
	return out
}

// singleA is single DES of one block under half A.
func (k KeyPair) singleA(block [8]byte) [8]byte {
	c, err := des.NewCipher(k.A[:])
	if err != nil {
		panic(err)
	}
	var out [8]byte
	c.Encrypt(out[:], block[:])
	return out
}

// Service codes of the CVV family: CVV on the magnetic stripe (the card's own
// code, 101 or 201 for instance), CVV2 printed on the card (000), iCVV in the
// chip's track 2 image (999).
const (
	ServiceCodeCVV2 = "000"
	ServiceCodeICVV = "999"
)

// CVV computes the 3-digit card verification value of a PAN, an expiry in
// YYMM form and a service code, under a card verification key (CVK) pair:
//
//  1. PAN ‖ expiry ‖ service code, right-padded with zeros to 32 digits,
//     gives two 64-bit blocks (one digit per nibble);
//  2. block 1 is DES-encrypted under CVK A and XORed with block 2;
//  3. the result is triple-DES (EDE) encrypted under A, B;
//  4. decimalization: the digits 0-9 of the result's hex, left to right,
//     then its A-F nibbles minus 10; the first three are the CVV.
//
// With ServiceCodeCVV2 it is the CVV2 printed on a card (what the reveal
// page shows).
func CVV(cvk KeyPair, pan, expiryYYMM, serviceCode string) (string, error) {
	if err := digits("PAN", pan, 12, 19); err != nil {
		return "", err
	}
	if err := digits("expiry", expiryYYMM, 4, 4); err != nil {
		return "", err
	}
	if err := digits("service code", serviceCode, 3, 3); err != nil {
		return "", err
	}
	data := pan + expiryYYMM + serviceCode
	for len(data) < 32 {
		data += "0"
	}
	b1, b2 := packDigits(data[:16]), packDigits(data[16:])
	x := cvk.singleA(b1)
	for i := range x {
		x[i] ^= b2[i]
	}
	return decimalize(cvk.ede(x), 3), nil
}

// CVV2 is the CVV printed on a card expiring in month/year (year with four
// digits).
func CVV2(cvk KeyPair, pan string, month, year int) (string, error) {
	if month < 1 || month > 12 || year < 2000 || year > 2099 {
		return "", fmt.Errorf("carddata: expiry %02d/%d is not a card expiry", month, year)
	}
	return CVV(cvk, pan, fmt.Sprintf("%02d%02d", year%100, month), ServiceCodeCVV2)
}

// packDigits packs 16 decimal digits into 8 bytes, one per nibble.
func packDigits(s string) [8]byte {
	var b [8]byte
	for i := 0; i < 16; i++ {
		b[i/2] |= (s[i] - '0') << (4 * (1 - i%2))
	}
	return b
}

// decimalize takes n decimal digits from a block: first its nibbles 0-9 in
// order, then its nibbles A-F minus 10 in order.
func decimalize(b [8]byte, n int) string {
	out := make([]byte, 0, 16)
	var high []byte
	for i := 0; i < 16; i++ {
		v := b[i/2] >> (4 * (1 - i%2)) & 0xF
		if v < 10 {
			out = append(out, '0'+v)
		} else {
			high = append(high, '0'+v-10)
		}
	}
	return string(append(out, high...)[:n])
}

// digits checks that s is between min and max decimal digits.
func digits(what, s string, min, max int) error {
	if len(s) < min || len(s) > max {
		if min == max {
			return fmt.Errorf("carddata: %s must be %d digits", what, min)
		}
		return fmt.Errorf("carddata: %s must be %d to %d digits", what, min, max)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return fmt.Errorf("carddata: %s must be digits only", what)
		}
	}
	return nil
}
