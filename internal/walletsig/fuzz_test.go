package walletsig

import (
	"strings"
	"testing"
)

// FuzzParsers feeds one arbitrary string to every address, invoice and
// signature parser of walletsig (they read wallet addresses and signatures
// from request bodies). None may panic, and what they accept must
// round-trip: the canonical encoding of the parsed value is the input.
func FuzzParsers(f *testing.F) {
	for _, seed := range []string{"0x52908400098527886E0F7030069857D2E4169EE7", "0xde709f2102306220921060314715629080e2fb77",
		"TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL", "11111111111111111111111111111111", "GfEHGTt1xNaXoKDSbR2QjZfUrdsjbvZKnhNSp2Kmvdc6",
		"lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w",
		"spark1", "A12UEL5L", "a1lqfn3a", "", "0x", "lnbc", "ybndrfg8ejkmcpqxot1uwisza345h769"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a, err := ParseEVMAddress(s); err == nil && !strings.EqualFold(ChecksumAddress(a), s) {
			t.Fatalf("EVM %q parsed to %x", s, a)
		}
		if a, err := ParseSolanaAddress(s); err == nil && Base58Encode(a[:]) != s {
			t.Fatalf("Solana %q parsed to %x", s, a)
		}
		if a, err := ParseTronAddress(s); err == nil && Base58CheckEncode(a[:]) != s {
			t.Fatalf("Tron %q parsed to %x", s, a)
		}
		if b, err := Base58Decode(s); err == nil && Base58Encode(b) != s {
			t.Fatalf("Base58 %q decoded to %x", s, b)
		}
		_, _ = ParseSparkAddress(s)
		_, _ = ParseBolt11(s)
		_, _, _, _ = DecodeBech32(s)
		_, _ = ZBase32Decode(s)
		msg := []byte("paymentsd")
		for _, addr := range []string{"0xde709f2102306220921060314715629080e2fb77", "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL",
			"GfEHGTt1xNaXoKDSbR2QjZfUrdsjbvZKnhNSp2Kmvdc6"} {
			if VerifyEVM(addr, msg, s) == nil || VerifyTron(addr, msg, s) == nil || VerifySolana(addr, msg, s) == nil {
				t.Fatalf("signature %q accepted for %s", s, addr)
			}
		}
		if VerifyLightningNode(make([]byte, 33), msg, s) == nil {
			t.Fatalf("signature %q accepted for a zero node id", s)
		}
	})
}
