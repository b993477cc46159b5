package carddata

import (
	"crypto/subtle"
	"errors"
)

// PVV computes the Visa PIN verification value of a PIN (its first four
// digits) for a PAN under a PIN verification key (PVK) pair with key index
// pvki (0-9):
//
//  1. the transformed security parameter is the 11 rightmost digits of the
//     PAN without its check digit ‖ pvki ‖ the PIN's first 4 digits;
//  2. it is triple-DES (EDE) encrypted under the PVK pair;
//  3. decimalization (as for the CVV) gives the 4-digit PVV.
//
// The service stores the PVV, never the PIN; a PIN entry is right when its
// PVV equals the stored one (VerifyPVV).
func PVV(pvk KeyPair, pan string, pvki int, pin string) (string, error) {
	if err := digits("PAN", pan, 12, 19); err != nil {
		return "", err
	}
	if pvki < 0 || pvki > 9 {
		return "", errors.New("carddata: PIN verification key index must be 0 to 9")
	}
	if err := checkPIN(pin); err != nil {
		return "", err
	}
	body := pan[:len(pan)-1] // without the check digit
	tsp := body[len(body)-11:] + string(rune('0'+pvki)) + pin[:4]
	return decimalize(pvk.ede(packDigits(tsp)), 4), nil
}

// VerifyPVV reports whether pin has the stored PVV, in constant time.
func VerifyPVV(pvk KeyPair, pan string, pvki int, pin, stored string) (bool, error) {
	got, err := PVV(pvk, pan, pvki, pin)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(stored)) == 1, nil
}

// ErrBadPIN: a PIN is 4 to 12 decimal digits (ISO 9564-1).
var ErrBadPIN = errors.New("carddata: a PIN is 4 to 12 digits")

func checkPIN(pin string) error {
	if digits("PIN", pin, 4, 12) != nil {
		return ErrBadPIN
	}
	return nil
}
