package externalaccounts

import (
	"net/mail"
	"regexp"
	"strings"

	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// The format checks of account fields. Each returns "" when v is valid, or
// the message of the failure; the constraint name travels beside it. None
// changes its input: a value is valid exactly as sent, never after cleaning
// (no stripped spaces, no changed case).

// allDigits reports whether s is non-empty and only ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ABARoutingNumber checks a US ABA routing transit number: nine digits whose
// first two lie in a Federal Reserve range (00-12, 21-32, 61-72, 80) and
// whose weighted sum 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) is a multiple
// of 10.
func ABARoutingNumber(s string) string {
	if len(s) != 9 || !allDigits(s) {
		return "must be 9 digits"
	}
	if s == "000000000" {
		return "is not a routing number"
	}
	prefix := int(s[0]-'0')*10 + int(s[1]-'0')
	if !(prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix == 80) {
		return "does not start with a Federal Reserve routing symbol (00-12, 21-32, 61-72 or 80)"
	}
	d := func(i int) int { return int(s[i] - '0') }
	if (3*(d(0)+d(3)+d(6))+7*(d(1)+d(4)+d(7))+d(2)+d(5)+d(8))%10 != 0 {
		return "fails the ABA routing number checksum"
	}
	return ""
}

// USAccountNumber checks a US bank account number: 4 to 17 digits.
func USAccountNumber(s string) string {
	if len(s) < 4 || len(s) > 17 || !allDigits(s) {
		return "must be 4 to 17 digits"
	}
	return ""
}

// ibanLengths is the length of an IBAN in each country of the IBAN registry.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
	"JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
	"MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
	"NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
	"SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// IBAN checks an IBAN written without spaces: a country of the IBAN registry,
// that country's length, two check digits, an alphanumeric BBAN, and the
// ISO 7064 mod-97 check (the rearranged number leaves remainder 1). When
// country is not empty the IBAN must belong to it.
func IBAN(s, country string) string {
	if len(s) < 15 || len(s) > 34 {
		return "must be 15 to 34 characters without spaces"
	}
	cc := s[:2]
	if cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z' || !allDigits(s[2:4]) {
		return "must start with a country code in capitals and two check digits"
	}
	for i := 4; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "must hold only letters and digits after the check digits"
		}
	}
	if country != "" && cc != country {
		return "must be an IBAN of " + country
	}
	n, ok := ibanLengths[cc]
	if !ok {
		return cc + " does not issue IBANs"
	}
	if len(s) != n {
		return "an IBAN of " + cc + " has " + itoa(n) + " characters"
	}
	rearranged := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		default:
			v := int(upper(c)-'A') + 10
			rem = (rem*100 + v) % 97
		}
	}
	if rem != 1 {
		return "fails the IBAN checksum"
	}
	return ""
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

var bicRE = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)

// BIC checks a SWIFT/BIC code: bank (4 letters), an ISO country, location
// (2), optional branch (3).
func BIC(s string) string {
	if !bicRE.MatchString(s) {
		return "must be an 8 or 11 character SWIFT/BIC code such as DEUTDEFF"
	}
	if !customers.IsCountry(s[4:6]) {
		return "has " + s[4:6] + " where a country code belongs"
	}
	return ""
}

// CLABE checks a Mexican CLABE: 18 digits, the last a check digit over the
// first 17 weighted 3, 7, 1 repeating: (10 − Σ(dᵢ·wᵢ mod 10) mod 10) mod 10.
func CLABE(s string) string {
	if len(s) != 18 || !allDigits(s) {
		return "must be 18 digits"
	}
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := range 17 {
		sum += int(s[i]-'0') * weights[i%3] % 10
	}
	if (10-sum%10)%10 != int(s[17]-'0') {
		return "fails the CLABE check digit"
	}
	return ""
}

// CPF checks a Brazilian individual taxpayer number: 11 digits, not all the
// same, with its two mod-11 check digits.
func CPF(s string) string {
	if len(s) != 11 || !allDigits(s) {
		return "must be 11 digits"
	}
	if strings.Count(s, s[:1]) == 11 {
		return "is not a CPF"
	}
	for _, n := range []int{9, 10} {
		sum := 0
		for i := range n {
			sum += int(s[i]-'0') * (n + 1 - i)
		}
		if d := sum * 10 % 11 % 10; d != int(s[n]-'0') {
			return "fails the CPF check digits"
		}
	}
	return ""
}

// CNPJ checks a Brazilian company taxpayer number: 14 digits, not all the
// same, with its two mod-11 check digits.
func CNPJ(s string) string {
	if len(s) != 14 || !allDigits(s) {
		return "must be 14 digits"
	}
	if strings.Count(s, s[:1]) == 14 {
		return "is not a CNPJ"
	}
	w1 := []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	w2 := append([]int{6}, w1...)
	for _, w := range [][]int{w1, w2} {
		sum := 0
		for i, wi := range w {
			sum += int(s[i]-'0') * wi
		}
		d := 0
		if r := sum % 11; r >= 2 {
			d = 11 - r
		}
		if d != int(s[len(w)]-'0') {
			return "fails the CNPJ check digits"
		}
	}
	return ""
}

// BrazilTaxID is a CPF (11 digits) or a CNPJ (14 digits).
func BrazilTaxID(s string) string {
	if len(s) == 14 {
		return CNPJ(s)
	}
	if len(s) != 11 {
		return "must be a CPF (11 digits) or a CNPJ (14 digits)"
	}
	return CPF(s)
}

var (
	uuidRE     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	ifscRE     = regexp.MustCompile(`^[A-Z]{4}0[A-Z0-9]{6}$`)
	vpaRE      = regexp.MustCompile(`^[a-zA-Z0-9.\-_]+@[a-zA-Z0-9]+$`)
	e164RE     = regexp.MustCompile(`^\+[1-9][0-9]{5,13}$`)
	hostnameRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
	lnUserRE   = regexp.MustCompile(`^[a-z0-9\-_.+]+$`)
	bolt12RE   = regexp.MustCompile(`^lno1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]+$`)
)

// PixKey checks a PIX key against its declared type: CPF and CNPJ with
// their check digits, EMAIL an address of at most 77 characters, PHONE a
// Brazilian number +55 with 10 or 11 digits, RANDOM a lowercase UUID.
func PixKey(key, typ string) string {
	switch typ {
	case "CPF":
		return CPF(key)
	case "CNPJ":
		return CNPJ(key)
	case "EMAIL":
		if len(key) > 77 {
			return "an EMAIL key has at most 77 characters"
		}
		return Email(key)
	case "PHONE":
		rest, ok := strings.CutPrefix(key, "+55")
		if !ok || (len(rest) != 10 && len(rest) != 11) || !allDigits(rest) {
			return "a PHONE key is +55 followed by 10 or 11 digits"
		}
	case "RANDOM":
		if !uuidRE.MatchString(key) {
			return "a RANDOM key is a lowercase UUID"
		}
	}
	return ""
}

// IFSC checks an Indian Financial System Code.
func IFSC(s string) string {
	if !ifscRE.MatchString(s) {
		return "must be an IFSC such as HDFC0001234 (4 letters, 0, 6 letters or digits)"
	}
	return ""
}

// VPA checks a UPI virtual payment address.
func VPA(s string) string {
	if len(s) < 3 || len(s) > 255 || !vpaRE.MatchString(s) {
		return "must be a UPI address such as name@bank"
	}
	return ""
}

// Email checks an email address.
func Email(s string) string {
	if len(s) > 254 {
		return "must be at most 254 characters"
	}
	if a, err := mail.ParseAddress(s); err != nil || a.Address != s || !strings.Contains(s, "@") {
		return "must be an email address such as jane@example.com"
	}
	return ""
}

// Phone checks an E.164 number; with prefix (such as "+254") the number must
// start with it and then have exactly digits more digits.
func Phone(s, prefix string, digits int) string {
	if !e164RE.MatchString(s) {
		return "must be in E.164 format, such as +14155551234"
	}
	if prefix != "" {
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok || len(rest) != digits {
			return "must be " + prefix + " followed by " + itoa(digits) + " digits"
		}
	}
	return ""
}

// Country checks an ISO 3166-1 alpha-2 code in capitals.
func Country(s string) string {
	if !customers.IsCountry(s) {
		return "must be an ISO 3166-1 alpha-2 country code in capitals, such as US"
	}
	return ""
}

// EVMAddress checks an address on Ethereum, Base, Polygon or Plasma.
func EVMAddress(s string) string {
	if _, err := walletsig.ParseEVMAddress(s); err != nil {
		return err.Error()
	}
	return ""
}

// SolanaAddress checks a Solana address.
func SolanaAddress(s string) string {
	if _, err := walletsig.ParseSolanaAddress(s); err != nil {
		return err.Error()
	}
	return ""
}

// TronAddress checks a Tron address.
func TronAddress(s string) string {
	if _, err := walletsig.ParseTronAddress(s); err != nil {
		return err.Error()
	}
	return ""
}

// SparkAddress checks a Spark address.
func SparkAddress(s string) string {
	if _, err := walletsig.ParseSparkAddress(s); err != nil {
		return err.Error()
	}
	return ""
}

// Bolt11Invoice checks a BOLT 11 Lightning invoice, signature included.
func Bolt11Invoice(s string) string {
	if _, err := walletsig.ParseBolt11(s); err != nil {
		return err.Error()
	}
	return ""
}

// Bolt12Offer checks the shape of a BOLT 12 offer: lno1 followed by bech32
// characters, lowercase, without checksum (BOLT 12 strings carry none).
func Bolt12Offer(s string) string {
	if len(s) < 20 || len(s) > 4096 || !bolt12RE.MatchString(s) {
		return "must be a BOLT 12 offer: lno1 followed by bech32 characters, in lowercase"
	}
	return ""
}

// LightningAddress checks a Lightning address (LUD-16): user@domain, in
// lowercase, where user is letters, digits and -_.+ and domain a DNS name.
func LightningAddress(s string) string {
	user, domain, ok := strings.Cut(s, "@")
	if !ok || len(s) > 320 || user == "" || !lnUserRE.MatchString(user) || !hostnameRE.MatchString(domain) {
		return "must be a Lightning address such as alice@example.com, in lowercase"
	}
	return ""
}
