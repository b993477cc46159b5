package carddata

import (
	"crypto/aes"
	"crypto/rand"
	"errors"
)

// ISO 9564-1 format 4 (AES) PIN blocks. The plain PIN field is 16 bytes:
// nibble 4 (the format), the PIN length, the PIN digits, fill nibbles A up to
// byte 8, then 8 random bytes. The PAN field is 16 bytes: nibble M (PAN
// length minus 12, or 0 for a PAN of 12 digits or fewer, which is
// left-padded with zeros to 12), the PAN, then zero nibbles. The enciphered
// block is E(K, E(K, PIN field) XOR PAN field).

// errPINField: a decrypted PIN field is not a well-formed format 4 field.
var errPINField = errors.New("carddata: not an ISO 9564 format 4 PIN field")

// EncodePINField returns the plain format 4 PIN field of pin, its 8 trailing
// bytes taken from random (crypto/rand when nil).
func EncodePINField(pin string, random []byte) ([16]byte, error) {
	var f [16]byte
	if err := checkPIN(pin); err != nil {
		return f, err
	}
	nib := make([]byte, 16)
	nib[0], nib[1] = 4, byte(len(pin))
	for i := 2; i < 16; i++ {
		nib[i] = 0xA
	}
	for i := 0; i < len(pin); i++ {
		nib[2+i] = pin[i] - '0'
	}
	for i := 0; i < 8; i++ {
		f[i] = nib[2*i]<<4 | nib[2*i+1]
	}
	if random == nil {
		random = make([]byte, 8)
		if _, err := rand.Read(random); err != nil {
			return f, err
		}
	}
	if len(random) < 8 {
		return f, errors.New("carddata: format 4 needs 8 random bytes")
	}
	copy(f[8:], random[:8])
	return f, nil
}

// DecodePINField returns the PIN of a plain format 4 PIN field.
func DecodePINField(f []byte) (string, error) {
	if len(f) != 16 || f[0]>>4 != 4 {
		return "", errPINField
	}
	n := int(f[0] & 0xF)
	if n < 4 || n > 12 {
		return "", errPINField
	}
	pin := make([]byte, 0, n)
	for i := 2; i < 16; i++ {
		v := f[i/2] >> (4 * (1 - i%2)) & 0xF
		switch {
		case i < 2+n && v <= 9:
			pin = append(pin, '0'+v)
		case i >= 2+n && v == 0xA:
		default:
			return "", errPINField
		}
	}
	return string(pin), nil
}

// encodePANField returns the format 4 PAN field of pan.
func encodePANField(pan string) ([16]byte, error) {
	var f [16]byte
	if err := digits("PAN", pan, 1, 19); err != nil {
		return f, err
	}
	m := 0
	if len(pan) > 12 {
		m = len(pan) - 12
	}
	for len(pan) < 12 {
		pan = "0" + pan
	}
	nib := make([]byte, 32)
	nib[0] = byte(m)
	for i := 0; i < len(pan); i++ {
		nib[1+i] = pan[i] - '0'
	}
	for i := range f {
		f[i] = nib[2*i]<<4 | nib[2*i+1]
	}
	return f, nil
}

// EncipherFormat4 returns the ISO 9564 format 4 PIN block of pin for pan
// under the AES key (16, 24 or 32 bytes); random as for EncodePINField.
func EncipherFormat4(key []byte, pin, pan string, random []byte) ([16]byte, error) {
	var out [16]byte
	c, err := aes.NewCipher(key)
	if err != nil {
		return out, err
	}
	pf, err := EncodePINField(pin, random)
	if err != nil {
		return out, err
	}
	af, err := encodePANField(pan)
	if err != nil {
		return out, err
	}
	var x [16]byte
	c.Encrypt(x[:], pf[:])
	for i := range x {
		x[i] ^= af[i]
	}
	c.Encrypt(out[:], x[:])
	return out, nil
}

// DecipherFormat4 returns the PIN of a format 4 PIN block for pan.
func DecipherFormat4(key []byte, block []byte, pan string) (string, error) {
	c, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	if len(block) != 16 {
		return "", errPINField
	}
	af, err := encodePANField(pan)
	if err != nil {
		return "", err
	}
	var x, pf [16]byte
	c.Decrypt(x[:], block)
	for i := range x {
		x[i] ^= af[i]
	}
	c.Decrypt(pf[:], x[:])
	return DecodePINField(pf[:])
}
