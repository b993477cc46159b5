package walletsig

import (
	"crypto/sha256"
	"errors"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Bolt11 is what paymentsd needs from a BOLT 11 Lightning invoice.
type Bolt11 struct {
	// Network is the currency prefix: bc (mainnet), tb (testnet), tbs
	// (signet), bcrt (regtest) or sb (simnet).
	Network string
	// Amount is the amount part of the human-readable part as written
	// (digits and an optional m/u/n/p multiplier), empty for "any amount".
	Amount string
	// Timestamp is the invoice's creation time, seconds since the epoch.
	Timestamp int64
	// Payee is the 33-byte compressed public key of the node that signed
	// the invoice (recovered from its signature, and equal to its n field
	// when that is present).
	Payee []byte
}

// bolt11Networks are the currency prefixes, longest first so that "bcrt"
// is not read as "bc".
var bolt11Networks = []string{"bcrt", "tbs", "bc", "tb", "sb"}

// ParseBolt11 decodes a BOLT 11 invoice and checks its signature, which
// yields the payee node.
func ParseBolt11(invoice string) (Bolt11, error) {
	hrp, words, variant, err := DecodeBech32(invoice)
	if err != nil {
		return Bolt11{}, errors.New("is not a bech32 string with a valid checksum")
	}
	if variant != Bech32 {
		return Bolt11{}, errors.New("must use the bech32 checksum, not bech32m")
	}
	rest, ok := strings.CutPrefix(hrp, "ln")
	if !ok {
		return Bolt11{}, errors.New("must start with ln")
	}
	var inv Bolt11
	for _, n := range bolt11Networks {
		if strings.HasPrefix(rest, n) {
			inv.Network, inv.Amount = n, rest[len(n):]
			break
		}
	}
	if inv.Network == "" {
		return Bolt11{}, errors.New("has an unknown currency prefix (want lnbc, lntb, lntbs, lnbcrt or lnsb)")
	}
	if !validBolt11Amount(inv.Amount) {
		return Bolt11{}, errors.New("has a malformed amount")
	}
	const sigWords = 104 // 520 bits: 64-byte signature and 1-byte recovery id
	if len(words) < 7+sigWords {
		return Bolt11{}, errors.New("is too short to hold a timestamp and a signature")
	}
	for _, w := range words[:7] {
		inv.Timestamp = inv.Timestamp<<5 | int64(w)
	}
	body, sigPart := words[:len(words)-sigWords], words[len(words)-sigWords:]
	var declared []byte
	for i := 7; i < len(body); {
		if i+3 > len(body) {
			return Bolt11{}, errors.New("has a truncated tagged field")
		}
		typ, n := body[i], int(body[i+1])<<5|int(body[i+2])
		if i+3+n > len(body) {
			return Bolt11{}, errors.New("has a truncated tagged field")
		}
		if typ == 19 && n == 53 { // n: the payee node's public key
			declared, err = convertBits(body[i+3:i+3+n], 5, 8, false)
			if err != nil {
				return Bolt11{}, errors.New("has a malformed payee field")
			}
		}
		i += 3 + n
	}
	sig, err := convertBits(sigPart, 5, 8, false)
	if err != nil || len(sig) != 65 || sig[64] > 3 {
		return Bolt11{}, errors.New("has a malformed signature")
	}
	data, _ := convertBits(body, 5, 8, true)
	hash := sha256.Sum256(append([]byte(hrp), data...))
	compact := append([]byte{27 + 4 + sig[64]}, sig[:64]...)
	pub, _, err := ecdsa.RecoverCompact(compact, hash[:])
	if err != nil {
		return Bolt11{}, errors.New("has a signature no key could have made")
	}
	inv.Payee = pub.SerializeCompressed()
	if declared != nil && string(declared) != string(inv.Payee) {
		return Bolt11{}, errors.New("is not signed by the payee it names")
	}
	return inv, nil
}

func validBolt11Amount(a string) bool {
	if a == "" {
		return true
	}
	digits := a
	if last := a[len(a)-1]; last == 'm' || last == 'u' || last == 'n' || last == 'p' {
		digits = a[:len(a)-1]
	}
	if digits == "" || digits[0] == '0' {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// lightningMessagePrefix is what node signmessage prepends before hashing.
const lightningMessagePrefix = "Lightning Signed Message:"

// LightningMessageHash is SHA256(SHA256(prefix + msg)).
func LightningMessageHash(msg []byte) []byte {
	first := sha256.Sum256(append([]byte(lightningMessagePrefix), msg...))
	second := sha256.Sum256(first[:])
	return second[:]
}

// VerifyLightningNode checks a signmessage signature (z-base-32 of a 65-byte
// recoverable signature) by the node whose compressed public key is nodeID.
func VerifyLightningNode(nodeID []byte, msg []byte, signature string) error {
	sig, err := ZBase32Decode(strings.TrimSpace(signature))
	if err != nil || len(sig) != 65 || sig[0] < 27 || sig[0] > 34 {
		return ErrMalformed
	}
	pub, _, err := ecdsa.RecoverCompact(sig, LightningMessageHash(msg))
	if err != nil {
		return ErrMismatch
	}
	if string(pub.SerializeCompressed()) != string(nodeID) {
		return ErrMismatch
	}
	return nil
}

// SignLightning makes a node signmessage signature, for tests and sandbox
// tooling.
func SignLightning(key *secp256k1.PrivateKey, msg []byte) string {
	return ZBase32Encode(ecdsa.SignCompact(key, LightningMessageHash(msg), true))
}

// MakeBolt11 builds a minimal signed BOLT 11 invoice under hrp (such as
// "lnbcrt" or "lnbc10u"): a timestamp and a payment hash, signed by key.
// It exists for tests and sandbox tooling; real invoices come from nodes.
func MakeBolt11(hrp string, key *secp256k1.PrivateKey, timestamp int64, paymentHash [32]byte) string {
	var words []byte
	for i := 6; i >= 0; i-- {
		words = append(words, byte(timestamp>>(5*i)&31))
	}
	hw, _ := convertBits(paymentHash[:], 8, 5, true) // 52 words
	words = append(words, 1, byte(len(hw)>>5), byte(len(hw)&31))
	words = append(words, hw...)
	data, _ := convertBits(words, 5, 8, true)
	digest := sha256.Sum256(append([]byte(hrp), data...))
	compact := ecdsa.SignCompact(key, digest[:], true) // [27+4+recid] r s
	sig := append(append([]byte(nil), compact[1:]...), compact[0]-27-4)
	sw, _ := convertBits(sig, 8, 5, true)
	return encodeWords(hrp, append(words, sw...), Bech32)
}

// encodeWords renders 5-bit words under hrp with a checksum variant.
func encodeWords(hrp string, words []byte, variant uint32) string {
	values := append(bech32HRPExpand(hrp), words...)
	values = append(values, 0, 0, 0, 0, 0, 0)
	mod := bech32Polymod(values) ^ variant
	out := []byte(hrp + "1")
	for _, w := range words {
		out = append(out, bech32Charset[w])
	}
	for i := range 6 {
		out = append(out, bech32Charset[(mod>>(5*(5-i)))&31])
	}
	return string(out)
}
