package cards

import (
	"crypto/rand"
	"math/big"
	"time"
)

// panLength is the length of the card numbers issued (16 digits).
const panLength = 16

// validityYears is how long a new card is valid.
const validityYears = 3

// newPAN returns a random card number on the program's test BIN whose last
// digit is the Luhn check digit.
func newPAN(bin string) (string, error) {
	digits := []byte(bin)
	for len(digits) < panLength-1 {
		n, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			return "", err
		}
		digits = append(digits, byte('0'+n.Int64()))
	}
	return string(append(digits, luhnDigit(string(digits)))), nil
}

// luhnDigit is the check digit that makes payload+digit pass Luhn.
func luhnDigit(payload string) byte {
	sum := 0
	for i := len(payload) - 1; i >= 0; i-- {
		d := int(payload[i] - '0')
		if (len(payload)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// LuhnValid reports whether a string of digits passes the Luhn check.
func LuhnValid(pan string) bool {
	if len(pan) < 2 {
		return false
	}
	for i := 0; i < len(pan); i++ {
		if pan[i] < '0' || pan[i] > '9' {
			return false
		}
	}
	return luhnDigit(pan[:len(pan)-1]) == pan[len(pan)-1]
}

// expiry is the last valid month of a card issued at now.
func expiry(now time.Time) (month, year int) {
	now = now.UTC()
	return int(now.Month()), now.Year() + validityYears
}
