package externalaccounts

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// abaWithCheckDigit completes 8 digits with the ABA check digit.
func abaWithCheckDigit(first8 string) string {
	w := []int{3, 7, 1, 3, 7, 1, 3, 7}
	sum := 0
	for i := range 8 {
		sum += int(first8[i]-'0') * w[i]
	}
	return first8 + string(rune('0'+(10-sum%10)%10))
}

func expectValid(t *testing.T, name string, check func(string) string, good []string, bad []string) {
	t.Helper()
	for _, s := range good {
		if msg := check(s); msg != "" {
			t.Errorf("%s(%q) = %q, want valid", name, s, msg)
		}
	}
	for _, s := range bad {
		if check(s) == "" {
			t.Errorf("%s(%q) valid, want invalid", name, s)
		}
	}
}

func TestABARoutingNumber(t *testing.T) {
	good := []string{"021000021", "011000015", "121000358", "322271627", abaWithCheckDigit("80000000"), abaWithCheckDigit("00000001")}
	bad := []string{
		"021000022", "021000020", // checksum off by one either way
		"02100002", "0210000210", "02100002a", " 21000021", "", // shape
		"000000000",                   // all zeros passes the sum but is no routing number
		abaWithCheckDigit("13000000"), // valid checksum, no Federal Reserve symbol 13-20
		abaWithCheckDigit("73000000"), abaWithCheckDigit("99000000"),
	}
	expectValid(t, "ABARoutingNumber", ABARoutingNumber, good, bad)
	// Every single-digit change of a valid number breaks the checksum.
	base := "021000021"
	for i := range 9 {
		for d := byte('0'); d <= '9'; d++ {
			if d == base[i] {
				continue
			}
			s := base[:i] + string(d) + base[i+1:]
			if ABARoutingNumber(s) == "" {
				t.Errorf("%s passes after changing digit %d", s, i)
			}
		}
	}
}

func TestUSAccountNumber(t *testing.T) {
	expectValid(t, "USAccountNumber", USAccountNumber,
		[]string{"1234", "12345678901234567", "000123456789"},
		[]string{"123", "123456789012345678", "12a4", "1234 5678", "", "-1234"})
}

func TestIBAN(t *testing.T) {
	good := []string{"GB82WEST12345698765432", "DE89370400440532013000", "DK5000400440116243", "AE070331234567890123456",
		"EG380019000500000000263180002", "PK36SCBL0000001123456702", "FR1420041010050500013M02606", "NO9386011117947",
		"BE68539007547034", "GB82west12345698765432"}
	bad := []string{
		"GB82WEST12345698765433",      // checksum
		"GB28WEST12345698765432",      // check digits swapped
		"GB82WEST1234569876543",       // one short for GB
		"GB82WEST123456987654321",     // one long for GB
		"XX82WEST12345698765432",      // no such IBAN country
		"US12345678901234567",         // the US issues no IBANs
		"GB82 WEST 1234 5698 7654 32", // spaces
		"gb82WEST12345698765432",      // country in lower case
		"GB8AWEST12345698765432",      // check digits not digits
		"GB82WEST1234569876543-",      // punctuation
		"", "GB82",
	}
	expectValid(t, "IBAN", func(s string) string { return IBAN(s, "") }, good, bad)
	if IBAN("DE89370400440532013000", "DK") == "" || IBAN("DK5000400440116243", "DK") != "" {
		t.Fatal("a country-bound IBAN check accepts only its country")
	}
}

func TestBIC(t *testing.T) {
	expectValid(t, "BIC", BIC,
		[]string{"DEUTDEFF", "DEUTDEFF500", "HSBCHKHHHKH", "CENAIDJA"},
		[]string{"DEUTXXFF", "DEUTDEF", "DEUTDEFF50", "deutdeff", "DEUT DEFF", "1EUTDEFF"})
}

func TestCLABE(t *testing.T) {
	good := "002010077777777771"
	bad := []string{"002010077777777772", "00201007777777777", "0020100777777777711", "00201007777777777a"}
	expectValid(t, "CLABE", CLABE, []string{good}, bad)
	for d := byte('0'); d <= '9'; d++ {
		if s := good[:17] + string(d); d != good[17] && CLABE(s) == "" {
			t.Errorf("%s passes with the wrong check digit", s)
		}
	}
}

func TestBrazilTaxIDs(t *testing.T) {
	expectValid(t, "CPF", CPF, []string{"52998224725", "11144477735"}, []string{"52998224724", "52998224715", "11111111111", "5299822472", "5299822472a"})
	expectValid(t, "CNPJ", CNPJ, []string{"11222333000181", "11444777000161"}, []string{"11222333000182", "11222333000191", "00000000000000", "1122233300018"})
	expectValid(t, "BrazilTaxID", BrazilTaxID, []string{"52998224725", "11222333000181"}, []string{"529982247251", "1122233300018"})
}

func TestPixKey(t *testing.T) {
	for _, c := range []struct {
		key, typ string
		ok       bool
	}{
		{"52998224725", "CPF", true}, {"52998224724", "CPF", false},
		{"11222333000181", "CNPJ", true}, {"52998224725", "CNPJ", false},
		{"jane@example.com", "EMAIL", true}, {"not-an-email", "EMAIL", false},
		{strings.Repeat("a", 71) + "@ex.com", "EMAIL", false},
		{"+5511987654321", "PHONE", true}, {"+551187654321", "PHONE", true}, {"+5411987654321", "PHONE", false}, {"11987654321", "PHONE", false},
		{"123e4567-e89b-42d3-a456-426614174000", "RANDOM", true}, {"123E4567-E89B-42D3-A456-426614174000", "RANDOM", false},
	} {
		if got := PixKey(c.key, c.typ) == ""; got != c.ok {
			t.Errorf("PixKey(%q, %s) valid=%v, want %v", c.key, c.typ, got, c.ok)
		}
	}
}

func TestIndianCodes(t *testing.T) {
	expectValid(t, "IFSC", IFSC, []string{"HDFC0001234", "SBIN0ABCDEF"}, []string{"HDFC1001234", "HDF00001234", "hdfc0001234", "HDFC000123"})
	expectValid(t, "VPA", VPA, []string{"user@upi", "jane.doe-1@okhdfc"}, []string{"user@", "@upi", "us er@upi", "u@up.i"})
}

func TestPhone(t *testing.T) {
	ok := func(s string) string { return Phone(s, "+254", 9) }
	expectValid(t, "Phone+254", ok, []string{"+254712345678"}, []string{"+25471234567", "+2547123456789", "+255712345678", "254712345678"})
	expectValid(t, "Phone", func(s string) string { return Phone(s, "", 0) }, []string{"+14155551234", "+442071838750"},
		[]string{"14155551234", "+0123456789", "+1 415 555 1234", "+12345"})
	expectValid(t, "indonesianPhone", indonesianPhone, []string{"+6281234567890", "+62812345678"}, []string{"+628123456", "+6581234567890"})
}

func TestWalletAddresses(t *testing.T) {
	key, _ := secp256k1.GeneratePrivateKey()
	evm := walletsig.ChecksumAddress(walletsig.EVMAddressOf(key.PubKey()))
	expectValid(t, "EVMAddress", EVMAddress,
		[]string{evm, strings.ToLower(evm), "0x52908400098527886E0F7030069857D2E4169EE7", "0xde709f2102306220921060314715629080e2fb77"},
		[]string{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", strings.ToLower(evm)[2:], evm + "0", "0x" + strings.Repeat("g", 40)})
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	sol := walletsig.SolanaAddressOf(pub)
	expectValid(t, "SolanaAddress", SolanaAddress, []string{sol, walletsig.Base58Encode(make([]byte, 32))},
		[]string{sol + sol, "0" + sol[1:], walletsig.Base58Encode(make([]byte, 33)), evm})
	tron := walletsig.TronAddressOf(key.PubKey())
	expectValid(t, "TronAddress", TronAddress, []string{tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
		[]string{tamperLast(tron), walletsig.Base58CheckEncode(append([]byte{0x00}, make([]byte, 20)...)), evm})
	spark := walletsig.EncodeSparkAddress("spark", key.PubKey().SerializeCompressed())
	expectValid(t, "SparkAddress", SparkAddress, []string{spark, strings.ToUpper(spark)},
		[]string{tamperLast(spark), walletsig.EncodeSparkAddress("bc", key.PubKey().SerializeCompressed()), "spark1"})
	var hash [32]byte
	inv := walletsig.MakeBolt11("lnbc10u", key, 1700000000, hash)
	expectValid(t, "Bolt11Invoice", Bolt11Invoice, []string{inv, walletsig.MakeBolt11("lntb", key, 1700000000, hash)},
		[]string{tamperLast(inv), "lnbc1", "lno1qcp4256ypq", walletsig.MakeBolt11("lnxy", key, 1700000000, hash)})
	expectValid(t, "Bolt12Offer", Bolt12Offer, []string{"lno1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrc"},
		[]string{"lnbc1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrc", "lno1QGSQ", "lno1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrb"})
	expectValid(t, "LightningAddress", LightningAddress, []string{"alice@example.com", "a.b-c_d+e@pay.example.co"},
		[]string{"Alice@example.com", "alice@localhost", "alice", "@example.com", "alice@exa mple.com", "alice@-example.com"})
}

// tamperLast changes the last bech32 character of s to a different one; a
// fixed replacement would leave the invoice intact whenever the random key
// made it end in that character already.
func tamperLast(s string) string {
	last := s[len(s)-1]
	repl := byte('q')
	if last == 'q' {
		repl = 'p'
	}
	return s[:len(s)-1] + string(repl)
}
