package carddata

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// Published ISO 9564-1 format 4 vectors (AES key 00112233445566778899AABBCCDDEEFF;
// the first with random fill FF…FF, from the psec and paysec test suites).
func TestFormat4_PublishedVectors(t *testing.T) {
	key, _ := hex.DecodeString("00112233445566778899AABBCCDDEEFF")
	got, err := EncipherFormat4(key, "1234", "1234567890123456789", bytes.Repeat([]byte{0xFF}, 8))
	if err != nil || strings.ToUpper(hex.EncodeToString(got[:])) != "28B41FDDD29B743E93124BD8E32D921E" {
		t.Fatalf("encipher = %X, %v", got, err)
	}
	for _, v := range []struct{ pin, pan, block string }{
		{"1234", "1234567890123456789", "28B41FDDD29B743E93124BD8E32D921E"},
		{"1234", "1234567890123456", "52DB178C6EDCE52E3A70F7FBC8E9C758"},
		{"123456", "123456789012345678", "847A0209C659E4C4A79CA6A2A2217D31"},
	} {
		b, _ := hex.DecodeString(v.block)
		pin, err := DecipherFormat4(key, b, v.pan)
		if err != nil || pin != v.pin {
			t.Errorf("decipher %s = %q, %v; want %s", v.block, pin, err, v.pin)
		}
	}
}

func TestFormat4_RoundTripAndRefusals(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	for _, pin := range []string{"0000", "1234", "987654321012"} {
		for _, pan := range []string{"123456789012", "4000001234567899", "1234567890123456789", "12345"} {
			b, err := EncipherFormat4(key, pin, pan, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := DecipherFormat4(key, b[:], pan); err != nil || got != pin {
				t.Fatalf("round trip %s/%s = %q, %v", pin, pan, got, err)
			}
			if got, err := DecipherFormat4(key, b[:], "4000001234567890"); err == nil && got == pin && pan != "4000001234567890" {
				t.Fatalf("block for %s opened with another PAN", pan)
			}
		}
	}
	for _, pin := range []string{"123", "1234567890123", "12a4", ""} {
		if _, err := EncipherFormat4(key, pin, "4000001234567899", nil); err == nil {
			t.Errorf("PIN %q accepted", pin)
		}
	}
	if _, err := DecipherFormat4(key, []byte{1, 2, 3}, "4000001234567899"); err == nil {
		t.Error("short block accepted")
	}
}

func TestDecodePINField_Refusals(t *testing.T) {
	good, _ := EncodePINField("1234", bytes.Repeat([]byte{0}, 8))
	if pin, err := DecodePINField(good[:]); err != nil || pin != "1234" {
		t.Fatalf("%q %v", pin, err)
	}
	for name, mutate := range map[string]func(f []byte){
		"format 0":    func(f []byte) { f[0] = 0x04 },
		"length 3":    func(f []byte) { f[0] = 0x43 },
		"length 13":   func(f []byte) { f[0] = 0x4D },
		"digit A":     func(f []byte) { f[1] = 0xA2 },
		"fill not A":  func(f []byte) { f[3] = 0xA0 },
		"short field": nil,
	} {
		f := append([]byte(nil), good[:]...)
		if mutate == nil {
			f = f[:15]
		} else {
			mutate(f)
		}
		if _, err := DecodePINField(f); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func FuzzDecodePINField(f *testing.F) {
	good, _ := EncodePINField("123456", nil)
	f.Add(good[:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pin, err := DecodePINField(b)
		if err != nil {
			return
		}
		if checkPIN(pin) != nil {
			t.Fatalf("decoded a bad PIN %q", pin)
		}
		again, err := EncodePINField(pin, b[8:])
		if err != nil || !bytes.Equal(again[:], b) {
			t.Fatalf("field does not re-encode: %x vs %x", again, b)
		}
	})
}
