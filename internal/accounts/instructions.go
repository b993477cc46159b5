package accounts

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/internal/currency"
)

// Sandbox funding instructions. Every value is derived from the account id,
// so an account always shows the same details, and each is well-formed for
// its scheme (checksums included) while pointing at nothing real: the ABA
// routing number and BICs belong to no bank (a BIC whose location code ends
// in 0 is a test BIC), Bitcoin addresses are testnet, Spark addresses
// regtest. In production no banking or custody partner is configured yet, so
// production accounts show no instructions rather than invented ones.

// SandboxRoutingNumber is the ABA routing number of the sandbox bank: it
// passes the ABA checksum and belongs to no bank.
const SandboxRoutingNumber = "123456780"

// SandboxBankName names the sandbox bank.
const SandboxBankName = "paymentsd Sandbox Bank"

const sandboxNote = "Sandbox: no money moves. Simulate a settled deposit with POST /sandbox/internal-accounts/{accountId}/fund."

// seed is the deterministic source of an account's details.
func seed(accountID, purpose string) []byte {
	sum := sha256.Sum256([]byte("paymentsd-sandbox-instructions|" + purpose + "|" + accountID))
	return sum[:]
}

// digits returns n decimal digits derived from the account id.
func digits(accountID, purpose string, n int) string {
	v := new(big.Int).SetBytes(seed(accountID, purpose))
	s := v.Text(10)
	for len(s) < n {
		s = "0" + s
	}
	return s[len(s)-n:]
}

// FundingReference is the reference a depositor quotes to credit an
// account: "PSD" and 12 characters of Crockford base32 derived from its id
// (60 bits; a unique index catches the improbable clash).
func FundingReference(accountID string) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	v := binary.BigEndian.Uint64(seed(accountID, "reference"))
	var b strings.Builder
	b.WriteString("PSD")
	for range 12 {
		b.WriteByte(alphabet[v&31])
		v >>= 5
	}
	return b.String()
}

// swiftCountry is the country of the SWIFT instructions of fiat currencies
// without a scheme of their own here.
var swiftCountry = map[string]string{
	"INR": "IN", "PHP": "PH", "NGN": "NG", "CNY": "CN", "COP": "CO", "KES": "KE", "SGD": "SG", "HKD": "HK",
	"AUD": "AU", "CHF": "CH", "ZAR": "ZA", "JPY": "JP", "CAD": "CA",
}

// sandboxInstructions returns the funding instructions of a sandbox account.
func sandboxInstructions(accountID, cur, reference string, platform bool) []PaymentInstructions {
	one := func(note string, info AccountOrWalletInfo) PaymentInstructions {
		return PaymentInstructions{InstructionsNotes: note, IsPlatformAccount: platform, AccountOrWalletInfo: info}
	}
	bankNote := "Include the reference " + reference + " with the payment so it is credited to this account. " + sandboxNote
	walletNote := "Send only " + cur + " to this address. " + sandboxNote
	switch cur {
	case "USD":
		return []PaymentInstructions{one(bankNote, AccountOrWalletInfo{
			AccountType: "USD_ACCOUNT", PaymentRails: []string{"ACH", "WIRE", "RTP", "FEDNOW"},
			AccountNumber: "9" + digits(accountID, "account", 11), RoutingNumber: SandboxRoutingNumber,
			BankName: SandboxBankName, Reference: reference,
		})}
	case "EUR":
		return []PaymentInstructions{one(bankNote, AccountOrWalletInfo{
			AccountType: "EUR_ACCOUNT", PaymentRails: []string{"SEPA", "SEPA_INSTANT"},
			IBAN: IBAN("DE", "12345678"+digits(accountID, "account", 10)), SwiftCode: "PSDBDEF0",
			BankName: SandboxBankName, Reference: reference,
		})}
	case "GBP":
		return []PaymentInstructions{one(bankNote, AccountOrWalletInfo{
			AccountType: "GBP_ACCOUNT", PaymentRails: []string{"FASTER_PAYMENTS"},
			SortCode: "040075", AccountNumber: digits(accountID, "account", 8),
			BankName: SandboxBankName, Reference: reference,
		})}
	case "MXN":
		return []PaymentInstructions{one(bankNote, AccountOrWalletInfo{
			AccountType: "MXN_ACCOUNT", PaymentRails: []string{"SPEI"},
			ClabeNumber: CLABE("646180" + digits(accountID, "account", 11)),
			BankName:    SandboxBankName, Reference: reference,
		})}
	case "BRL":
		// A random Pix key is a version 4 UUID.
		b := seed(accountID, "pix")[:16]
		b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
		key, _ := uuid.FromBytes(b)
		return []PaymentInstructions{one(bankNote, AccountOrWalletInfo{
			AccountType: "BRL_ACCOUNT", PaymentRails: []string{"PIX"}, PixKey: key.String(), PixKeyType: "RANDOM",
			BankName: SandboxBankName, Reference: reference,
		})}
	case "BTC":
		return []PaymentInstructions{
			one(walletNote, AccountOrWalletInfo{AccountType: "BITCOIN_L1", Network: "BITCOIN",
				Address: SegwitAddress("tb", seed(accountID, "btc")[:20])}),
			one(walletNote, AccountOrWalletInfo{AccountType: "SPARK_WALLET", AssetType: "BTC",
				Address: sparkAddress(accountID)}),
		}
	case "USDB":
		return []PaymentInstructions{one(walletNote, AccountOrWalletInfo{AccountType: "SPARK_WALLET", AssetType: "USDB",
			Address: sparkAddress(accountID)})}
	case "USDC", "USDT", "SOL":
		info := AccountOrWalletInfo{AccountType: "SOLANA_WALLET", Address: solanaAddress(accountID)}
		if cur != "SOL" {
			info.AssetType = cur
		}
		return []PaymentInstructions{one(walletNote, info)}
	}
	c, _ := currency.Lookup(cur)
	if c.Crypto {
		return []PaymentInstructions{}
	}
	country := swiftCountry[cur]
	if country == "" {
		return []PaymentInstructions{}
	}
	return []PaymentInstructions{one(bankNote, AccountOrWalletInfo{
		AccountType: "SWIFT_ACCOUNT", PaymentRails: []string{"SWIFT"}, Country: country,
		SwiftCode: "PSDB" + country + "X0", BankName: SandboxBankName,
		AccountNumber: digits(accountID, "account", 12), Reference: reference,
	})}
}

// IBAN completes a BBAN of country with its ISO 13616 check digits.
func IBAN(country, bban string) string {
	rearranged := bban + country + "00"
	var num strings.Builder
	for _, r := range rearranged {
		if r >= 'A' && r <= 'Z' {
			fmt.Fprintf(&num, "%d", r-'A'+10)
		} else {
			num.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(num.String(), 10)
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", country, check, bban)
}

// CLABE appends the check digit to the first 17 digits of a Mexican CLABE.
func CLABE(first17 string) string {
	weights := [3]int{3, 7, 1}
	sum := 0
	for i := 0; i < 17; i++ {
		sum += int(first17[i]-'0') * weights[i%3] % 10
	}
	return first17 + fmt.Sprint((10-sum%10)%10)
}

// sparkAddress is a regtest Spark address whose identity key is a real
// secp256k1 point derived from the account id.
func sparkAddress(accountID string) string {
	key := secp256k1.PrivKeyFromBytes(seed(accountID, "spark")).PubKey().SerializeCompressed()
	payload := append([]byte{0x0a, byte(len(key))}, key...)
	return encodeBech32("sparkrt", convertBits(payload, 8, 5), bech32mConst)
}

// solanaAddress is an ed25519 public key derived from the account id, in
// base58.
func solanaAddress(accountID string) string {
	pub := ed25519.NewKeyFromSeed(seed(accountID, "solana")).Public().(ed25519.PublicKey)
	return base58(pub)
}

// SegwitAddress encodes a version 0 witness program (a 20-byte key hash) as
// a bech32 address of network hrp (bc, tb).
func SegwitAddress(hrp string, program []byte) string {
	return encodeBech32(hrp, append([]byte{0}, convertBits(program, 8, 5)...), bech32Const)
}

const (
	bech32Const  = 1
	bech32mConst = 0x2bc830a3
)

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

// encodeBech32 encodes 5-bit words under hrp with a BIP-173 (bech32) or
// BIP-350 (bech32m) checksum.
func encodeBech32(hrp string, words []byte, variant uint32) string {
	const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	values := make([]byte, 0, 2*len(hrp)+1+len(words)+6)
	for i := 0; i < len(hrp); i++ {
		values = append(values, hrp[i]>>5)
	}
	values = append(values, 0)
	for i := 0; i < len(hrp); i++ {
		values = append(values, hrp[i]&31)
	}
	values = append(values, words...)
	values = append(values, 0, 0, 0, 0, 0, 0)
	mod := bech32Polymod(values) ^ variant
	var b strings.Builder
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, w := range words {
		b.WriteByte(charset[w])
	}
	for i := range 6 {
		b.WriteByte(charset[(mod>>(5*(5-i)))&31])
	}
	return b.String()
}

// convertBits regroups bits (8 to 5, padding the last group).
func convertBits(data []byte, from, to uint) []byte {
	var acc, bits uint
	out := make([]byte, 0, len(data)*int(from)/int(to)+1)
	maxv := uint(1)<<to - 1
	for _, v := range data {
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if bits > 0 {
		out = append(out, byte(acc<<(to-bits)&maxv))
	}
	return out
}

// base58 encodes bytes with the Bitcoin alphabet.
func base58(b []byte) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	n := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}
