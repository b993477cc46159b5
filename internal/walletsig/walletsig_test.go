package walletsig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newKey(t *testing.T) *secp256k1.PrivateKey {
	t.Helper()
	k, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Known answers: Keccak-256 of the empty string, and of "Hello World" under
// the personal_sign prefix.
func TestKeccak256KnownAnswers(t *testing.T) {
	if got := hex.EncodeToString(Keccak256()); got != "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470" {
		t.Fatalf("keccak256('') = %s", got)
	}
	if got := hex.EncodeToString(PersonalSignHash([]byte("Hello World"))); got != "a1de988600a42c4b4ab089b619297c17d53cffae5d5120d82d8a92d0bb3b78f2" {
		t.Fatalf("personal_sign hash of Hello World = %s", got)
	}
}

// EIP-55 test vectors, and the address of private key 1.
func TestEVMAddressChecksum(t *testing.T) {
	for _, want := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		a, err := ParseEVMAddress(want)
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		if got := ChecksumAddress(a); got != want {
			t.Fatalf("checksum of %s = %s", want, got)
		}
		// Lower and upper case carry no checksum and are accepted.
		for _, s := range []string{strings.ToLower(want), "0x" + strings.ToUpper(want[2:])} {
			if _, err := ParseEVMAddress(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		// Flipping the case of one letter breaks the checksum.
		flipped := []byte(want)
		for i := 2; i < len(flipped); i++ {
			c := flipped[i]
			if c >= 'a' && c <= 'f' {
				flipped[i] = c - 32
				break
			}
			if c >= 'A' && c <= 'F' {
				flipped[i] = c + 32
				break
			}
		}
		if _, err := ParseEVMAddress(string(flipped)); err == nil {
			t.Fatalf("%s passes a checksum it fails", flipped)
		}
	}
	one := secp256k1.PrivKeyFromBytes(mustHex(t, "0000000000000000000000000000000000000000000000000000000000000001"))
	if got := ChecksumAddress(EVMAddressOf(one.PubKey())); got != "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf" {
		t.Fatalf("address of key 1 = %s", got)
	}
	for _, bad := range []string{"", "0x", "7E5F4552091A69125d5DfCb7b8C2659029395Bdf", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bd",
		"0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf00", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdg", "0X7e5f4552091a69125d5dfcb7b8c2659029395bdf"} {
		if _, err := ParseEVMAddress(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBase58KnownAnswers(t *testing.T) {
	if got := Base58Encode([]byte("Hello World!")); got != "2NEpo7TZRRrLZSi2U" {
		t.Fatalf("base58(Hello World!) = %s", got)
	}
	if got := Base58Encode([]byte{0, 0, 1}); got != "112" {
		t.Fatalf("leading zeros: %s", got)
	}
	// The genesis block's coinbase address.
	b, err := Base58CheckDecode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")
	if err != nil || hex.EncodeToString(b) != "0062e907b15cbf27d5425399ebf6f0fb50ebb88f18" {
		t.Fatalf("base58check decode: %x %v", b, err)
	}
	if _, err := Base58CheckDecode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb"); err == nil {
		t.Fatal("a bad checksum passes")
	}
	for _, bad := range []string{"", "0OIl", strings.Repeat("z", 300)} {
		if _, err := Base58Decode(bad); err == nil {
			t.Errorf("%q decodes", bad)
		}
	}
}

func TestBech32Vectors(t *testing.T) {
	for _, c := range []struct {
		s       string
		variant uint32
	}{{"A12UEL5L", Bech32}, {"a12uel5l", Bech32}, {"A1LQFN3A", Bech32m}, {"a1lqfn3a", Bech32m}} {
		_, _, v, err := DecodeBech32(c.s)
		if err != nil || v != c.variant {
			t.Fatalf("%s: variant %x err %v", c.s, v, err)
		}
	}
	for _, bad := range []string{"a12uel5m", "A12uel5l", "12uel5l", "a1uel5l"} {
		if _, _, _, err := DecodeBech32(bad); err == nil {
			t.Errorf("%q decodes", bad)
		}
	}
	payload := []byte("round trip")
	hrp, words, v, err := DecodeBech32(EncodeBech32("test", payload, Bech32m))
	if err != nil || hrp != "test" || v != Bech32m {
		t.Fatal(hrp, v, err)
	}
	if got, _ := convertBits(words, 5, 8, false); !bytes.Equal(got, payload) {
		t.Fatalf("round trip %q", got)
	}
}

func TestZBase32RoundTrip(t *testing.T) {
	for n := range 70 {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		got, err := ZBase32Decode(ZBase32Encode(b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: %x %v", n, got, err)
		}
	}
	if got := ZBase32Encode([]byte{0xff, 0x00}); got != "9hyy" {
		t.Fatalf("encode ff00 = %s", got)
	}
	for _, bad := range []string{"l", "99y9"} {
		if _, err := ZBase32Decode(bad); err == nil {
			t.Errorf("%q decodes", bad)
		}
	}
}

func TestVerifyEVM(t *testing.T) {
	key := newKey(t)
	addr := ChecksumAddress(EVMAddressOf(key.PubKey()))
	msg := []byte("paymentsd ownership check\nNonce: 1234")
	sig := SignEVM(key, msg)
	if err := VerifyEVM(addr, msg, sig); err != nil {
		t.Fatalf("valid signature: %v", err)
	}
	if err := VerifyEVM(strings.ToLower(addr), msg, strings.TrimPrefix(sig, "0x")); err != nil {
		t.Fatalf("lowercase address, no 0x: %v", err)
	}
	// v as 0/1 instead of 27/28.
	raw := mustHex(t, sig[2:])
	raw[64] -= 27
	if err := VerifyEVM(addr, msg, hex.EncodeToString(raw)); err != nil {
		t.Fatalf("v 0/1: %v", err)
	}
	if err := VerifyEVM(addr, append(msg, '!'), sig); !errors.Is(err, ErrMismatch) {
		t.Fatalf("tampered message: %v", err)
	}
	other := ChecksumAddress(EVMAddressOf(newKey(t).PubKey()))
	if err := VerifyEVM(other, msg, sig); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong key: %v", err)
	}
	// A signature over the raw keccak (no EIP-191 prefix) is not personal_sign.
	raw = signRSV(key, Keccak256(msg))
	if err := VerifyEVM(addr, msg, hex.EncodeToString(raw)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("unprefixed signature: %v", err)
	}
	for _, bad := range []string{"", "0x", "zz", sig[:len(sig)-2], sig + "00", sig[:len(sig)-2] + "05"} {
		if err := VerifyEVM(addr, msg, bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// r = 0 is well formed but no key makes it.
	zero := mustHex(t, sig[2:])
	copy(zero[:32], make([]byte, 32))
	if err := VerifyEVM(addr, msg, hex.EncodeToString(zero)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("r=0: %v", err)
	}
}

// USDT's contract address on Tron, and key 1's Tron address, which shares
// its 20 bytes with key 1's EVM address.
func TestTronAddresses(t *testing.T) {
	b, err := ParseTronAddress("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	if err != nil || hex.EncodeToString(b[:]) != "41a614f803b6fd780986a42c78ec9c7f77e6ded13c" {
		t.Fatalf("%x %v", b, err)
	}
	one := secp256k1.PrivKeyFromBytes(mustHex(t, "0000000000000000000000000000000000000000000000000000000000000001"))
	addr := TronAddressOf(one.PubKey())
	b, err = ParseTronAddress(addr)
	if err != nil || hex.EncodeToString(b[:]) != "417e5f4552091a69125d5dfcb7b8c2659029395bdf" || addr[0] != 'T' {
		t.Fatalf("%s %x %v", addr, b, err)
	}
	for _, bad := range []string{"", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"} {
		if _, err := ParseTronAddress(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestVerifyTron(t *testing.T) {
	key := newKey(t)
	addr := TronAddressOf(key.PubKey())
	msg := []byte("Verify TRON wallet\nNonce: abc")
	sig := SignTron(key, msg)
	if err := VerifyTron(addr, msg, sig); err != nil {
		t.Fatalf("valid: %v", err)
	}
	if err := VerifyTron(addr, []byte("Verify TRON wallet\nNonce: abd"), sig); !errors.Is(err, ErrMismatch) {
		t.Fatalf("tampered: %v", err)
	}
	if err := VerifyTron(TronAddressOf(newKey(t).PubKey()), msg, sig); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong key: %v", err)
	}
	// An Ethereum personal_sign signature is not a Tron signature.
	if err := VerifyTron(addr, msg, SignEVM(key, msg)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("EVM prefix accepted for Tron: %v", err)
	}
	if err := VerifyTron(addr, msg, "0x1234"); !errors.Is(err, ErrMalformed) {
		t.Fatalf("malformed: %v", err)
	}
}

// RFC 8032 section 7.1, test 1: the empty message.
func TestVerifySolanaKnownAnswer(t *testing.T) {
	seed := mustHex(t, "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	if hex.EncodeToString(pub) != "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a" {
		t.Fatalf("public key %x", pub)
	}
	sig := "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
	addr := SolanaAddressOf(pub)
	if err := VerifySolana(addr, nil, sig); err != nil {
		t.Fatalf("RFC 8032 vector: %v", err)
	}
	if err := VerifySolana(addr, nil, Base58Encode(mustHex(t, sig))); err != nil {
		t.Fatalf("RFC 8032 vector in base58: %v", err)
	}
}

func TestVerifySolana(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	addr := SolanaAddressOf(pub)
	msg := []byte("Verify Solana wallet\nNonce: 42")
	sig := ed25519.Sign(priv, msg)
	for _, enc := range []string{Base58Encode(sig), hex.EncodeToString(sig), "0x" + hex.EncodeToString(sig)} {
		if err := VerifySolana(addr, msg, enc); err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
	}
	if err := VerifySolana(addr, []byte("Verify Solana wallet\nNonce: 43"), Base58Encode(sig)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("tampered: %v", err)
	}
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	if err := VerifySolana(SolanaAddressOf(other), msg, Base58Encode(sig)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong key: %v", err)
	}
	for _, bad := range []string{"", "0OIl", Base58Encode(sig[:63]), hex.EncodeToString(sig[:63])} {
		if err := VerifySolana(addr, msg, bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, bad := range []string{"", "0x12", Base58Encode(make([]byte, 31)), "4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8W0"} {
		if _, err := ParseSolanaAddress(bad); err == nil {
			t.Errorf("address %q accepted", bad)
		}
	}
}

// The BOLT 11 specification's first example ("Please make a donation of any
// amount…") is signed by node 03e7156a…; recovering it from the signature is
// a known answer for the whole decoder.
func TestParseBolt11KnownAnswer(t *testing.T) {
	inv, err := ParseBolt11("lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w")
	if err != nil {
		t.Fatal(err)
	}
	if inv.Network != "bc" || inv.Amount != "" || inv.Timestamp != 1496314658 ||
		hex.EncodeToString(inv.Payee) != "03e7156ae33b0a208d0744199163177e909e80176e55d97a2f221ede0f934dd9ad" {
		t.Fatalf("%+v %x", inv, inv.Payee)
	}
}

// makeInvoice builds a signed BOLT 11 invoice for key, optionally naming
// the payee in an n field.
func makeInvoice(t *testing.T, hrp string, key *secp256k1.PrivateKey, withN bool) string {
	t.Helper()
	var hash [32]byte
	_, _ = rand.Read(hash[:])
	if !withN {
		return MakeBolt11(hrp, key, 1700000000, hash)
	}
	var words []byte
	ts := int64(1700000000)
	for i := 6; i >= 0; i-- {
		words = append(words, byte(ts>>(5*i)&31))
	}
	hw, _ := convertBits(hash[:], 8, 5, true)
	words = append(words, 1, byte(len(hw)>>5), byte(len(hw)&31))
	words = append(words, hw...)
	nw, _ := convertBits(key.PubKey().SerializeCompressed(), 8, 5, true) // 53 words
	words = append(words, 19, byte(len(nw)>>5), byte(len(nw)&31))
	words = append(words, nw...)
	data, _ := convertBits(words, 5, 8, true)
	digest := sha256.Sum256(append([]byte(hrp), data...))
	compact := ecdsa.SignCompact(key, digest[:], true)
	sig := append(append([]byte(nil), compact[1:]...), compact[0]-27-4)
	sw, _ := convertBits(sig, 8, 5, true)
	return encodeWords(hrp, append(words, sw...), Bech32)
}

func TestParseBolt11(t *testing.T) {
	key := newKey(t)
	for _, c := range []struct {
		hrp   string
		withN bool
	}{{"lnbcrt", false}, {"lntb2500u", true}, {"lnbc1m", false}} {
		inv, err := ParseBolt11(makeInvoice(t, c.hrp, key, c.withN))
		if err != nil {
			t.Fatalf("%s: %v", c.hrp, err)
		}
		if !bytes.Equal(inv.Payee, key.PubKey().SerializeCompressed()) {
			t.Fatalf("%s: payee %x", c.hrp, inv.Payee)
		}
	}
	good := makeInvoice(t, "lnbc", key, false)
	bad := []byte(good)
	bad[10] = map[bool]byte{true: 'q', false: 'p'}[bad[10] != 'q']
	for _, s := range []string{"", "lnbc1", string(bad), strings.Replace(good, "lnbc", "lnxx", 1), makeInvoice(t, "lnbc01m", key, false),
		EncodeBech32("lnbc", []byte("short"), Bech32), "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"} {
		if _, err := ParseBolt11(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestVerifyLightningNode(t *testing.T) {
	key := newKey(t)
	node := key.PubKey().SerializeCompressed()
	msg := []byte("Verify Lightning node\nNonce: 7")
	sig := SignLightning(key, msg)
	if len(sig) != 104 {
		t.Fatalf("zbase32 signature of %d characters", len(sig))
	}
	if err := VerifyLightningNode(node, msg, sig); err != nil {
		t.Fatalf("valid: %v", err)
	}
	if err := VerifyLightningNode(node, append(msg, ' '), sig); !errors.Is(err, ErrMismatch) {
		t.Fatalf("tampered: %v", err)
	}
	if err := VerifyLightningNode(newKey(t).PubKey().SerializeCompressed(), msg, sig); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong node: %v", err)
	}
	for _, bad := range []string{"", "not zbase32!", sig[:100], ZBase32Encode(append([]byte{40}, make([]byte, 64)...))} {
		if err := VerifyLightningNode(node, msg, bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseSparkAddress(t *testing.T) {
	key := newKey(t).PubKey().SerializeCompressed()
	for hrp, network := range map[string]string{"spark": "mainnet", "sparkrt": "regtest", "sp": "mainnet", "sprt": "regtest"} {
		a, err := ParseSparkAddress(EncodeSparkAddress(hrp, key))
		if err != nil || a.Network != network || !bytes.Equal(a.IdentityKey, key) {
			t.Fatalf("%s: %+v %v", hrp, a, err)
		}
	}
	// Extra protobuf fields after the key are skipped.
	extra := append(append([]byte{0x0a, 33}, key...), 0x10, 0x01, 0x1a, 0x02, 0xab, 0xcd)
	if _, err := ParseSparkAddress(EncodeBech32("spark", extra, Bech32m)); err != nil {
		t.Fatalf("extra fields: %v", err)
	}
	notAPoint := append([]byte{0x02}, bytes.Repeat([]byte{0xff}, 32)...)
	for _, bad := range []string{
		"",
		EncodeBech32("spark", append([]byte{0x0a, 33}, key...), Bech32), // bech32, not bech32m
		EncodeSparkAddress("bc", key),
		EncodeSparkAddress("spark", key[:32]),
		EncodeSparkAddress("spark", notAPoint),
		EncodeBech32("spark", []byte{0x0a, 40, 1, 2}, Bech32m),
	} {
		if _, err := ParseSparkAddress(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
