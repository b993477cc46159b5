package signedretry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

func testKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestStampRoundTrip(t *testing.T) {
	k := testKey(t)
	h, err := Sign(k, `{"operation":"X"}`)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseStamp(h)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Verify(`{"operation":"X"}`) {
		t.Fatal("own stamp does not verify")
	}
	if s.Verify(`{"operation":"Y"}`) || s.Verify(`{"operation":"X"} `) {
		t.Fatal("stamp verifies over other bytes")
	}
	// Padding is tolerated.
	if _, err := ParseStamp(h + strings.Repeat("=", (4-len(h)%4)%4)); err != nil {
		t.Fatalf("padded: %v", err)
	}
}

func TestParseStampRefusesMalformed(t *testing.T) {
	k := testKey(t)
	good, _ := Sign(k, "p")
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := map[string]string{
		"empty":          "",
		"not base64":     "!!!",
		"not json":       enc("hello"),
		"array":          enc("[]"),
		"unknown field":  enc(strings.Replace(string(raw), `"scheme"`, `"extra":1,"scheme"`, 1)),
		"other scheme":   enc(strings.Replace(string(raw), Scheme, "SIGNATURE_SCHEME_OTHER", 1)),
		"trailing":       enc(string(raw) + "{}"),
		"uncompressed":   enc(`{"publicKey":"04` + strings.Repeat("1", 128) + `","scheme":"` + Scheme + `","signature":"3006020101020101"}`),
		"off-curve":      enc(`{"publicKey":"02` + strings.Repeat("f", 64) + `","scheme":"` + Scheme + `","signature":"3006020101020101"}`),
		"signature hex":  enc(strings.Replace(string(raw), `"signature":"30`, `"signature":"zz`, 1)),
		"too long":       strings.Repeat("A", MaxStampLength+1),
		"missing fields": enc(`{"scheme":"` + Scheme + `"}`),
	}
	for name, h := range cases {
		if _, err := ParseStamp(h); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The parser never panics and whatever it accepts re-verifies consistently.
func FuzzParseStamp(f *testing.F) {
	k := testKey(f)
	good, _ := Sign(k, "payload")
	f.Add(good)
	f.Add("")
	f.Add("e30")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"publicKey":"02","scheme":"` + Scheme + `","signature":"30"}`)))
	f.Fuzz(func(t *testing.T, h string) {
		s, err := ParseStamp(h)
		if err != nil {
			return
		}
		if len(s.PublicKey) != 66 || s.Key == nil || len(s.Signature) == 0 {
			t.Fatalf("accepted an incomplete stamp: %+v", s)
		}
		_ = s.Verify("payload")
	})
}
