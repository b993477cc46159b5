package wallets

import (
	"bytes"
	"testing"
)

func TestLocalSealer(t *testing.T) {
	s, err := NewLocalSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.Seal([]byte("secret scalar"), []byte("ad-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret scalar")) {
		t.Fatal("plaintext visible in the sealed value")
	}
	got, err := s.Open(sealed, []byte("ad-1"))
	if err != nil || string(got) != "secret scalar" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s.Open(sealed, []byte("ad-2")); err == nil {
		t.Fatal("opened under other associated data")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := s.Open(sealed, []byte("ad-1")); err == nil {
		t.Fatal("opened a tampered value")
	}
	if _, err := s.Open([]byte("x"), nil); err == nil {
		t.Fatal("opened a short value")
	}
	if _, err := NewLocalSealer([]byte("short")); err == nil {
		t.Fatal("accepted a short secret")
	}
}

func TestParsePublicKey(t *testing.T) {
	k, _ := NewKey()
	c := CompressedHex(&k.PublicKey)
	pub, compressed, err := ParsePublicKey(c)
	if err != nil || !compressed || !pub.Equal(&k.PublicKey) {
		t.Fatalf("compressed round trip: %v %v", compressed, err)
	}
	u, _ := k.PublicKey.Bytes()
	pub, compressed, err = ParsePublicKey(hexs(u))
	if err != nil || compressed || !pub.Equal(&k.PublicKey) {
		t.Fatalf("uncompressed: %v %v", compressed, err)
	}
	for _, bad := range []string{"", "02", "04" + c[2:], "05" + c[2:], "02" + strings64("f"), "zz" + c[2:]} {
		if _, _, err := ParsePublicKey(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func strings64(s string) string { return string(bytes.Repeat([]byte(s), 64)) }
