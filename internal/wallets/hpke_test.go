package wallets

import (
	"crypto/ecdh"
	"crypto/rand"
	"strings"
	"testing"
)

func TestSealedBundleRoundTrip(t *testing.T) {
	priv, _ := ecdh.P256().GenerateKey(rand.Reader)
	b, err := SealBundle(priv.PublicKey(), InfoOTP, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenBundle(priv, InfoOTP, b)
	if err != nil || string(got) != "hello" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := OpenBundle(priv, InfoExport, b); err == nil {
		t.Fatal("opened under another info string")
	}
	other, _ := ecdh.P256().GenerateKey(rand.Reader)
	if _, err := OpenBundle(other, InfoOTP, b); err == nil {
		t.Fatal("opened with another key")
	}
}

func TestParseSealedBundleRefusesMalformed(t *testing.T) {
	enc := "04" + strings.Repeat("1", 128)
	for _, s := range []string{"", "{}", "[]", `{"encappedPublic":"` + enc + `"}`,
		`{"encappedPublic":"zz","ciphertext":"00"}`,
		`{"encappedPublic":"` + enc + `","ciphertext":"00112233445566778899aabbccddeeff"}`, // not on the curve
		`{"encappedPublic":"02` + strings.Repeat("1", 64) + `","ciphertext":"00112233445566778899aabbccddeeff"}`,
		`{"encappedPublic":"` + enc + `","ciphertext":"00","x":1}`,
	} {
		if _, _, err := ParseSealedBundle(s); err == nil {
			t.Errorf("accepted %q", s)
		}
	}
}

// The bundle parser never panics; what it accepts has the documented sizes.
func FuzzParseSealedBundle(f *testing.F) {
	priv, _ := ecdh.P256().GenerateKey(rand.Reader)
	good, _ := SealBundle(priv.PublicKey(), InfoOTP, []byte(`{"otpCode":"000000","publicKey":"02"}`))
	f.Add(good)
	f.Add("{}")
	f.Add(`{"encappedPublic":"04","ciphertext":""}`)
	f.Fuzz(func(t *testing.T, s string) {
		enc, ct, err := ParseSealedBundle(s)
		if err != nil {
			return
		}
		if len(enc) != 65 || len(ct) < 16 || len(ct) > maxBundleCiphertext {
			t.Fatalf("accepted enc %d bytes, ciphertext %d bytes", len(enc), len(ct))
		}
		_, _ = hpkeOpen(priv, InfoOTP, enc, ct)
	})
}

// The target-bundle parser (what clients run) never panics.
func FuzzParseTargetBundle(f *testing.F) {
	f.Add(`{"version":"v1","targetPublic":"04"}`)
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseTargetBundle(s) })
}
