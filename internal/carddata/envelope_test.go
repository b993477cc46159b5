package carddata

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"errors"
	"testing"
)

func TestPINEnvelope_RoundTripAndRefusals(t *testing.T) {
	priv, _ := ecdh.P256().GenerateKey(rand.Reader)
	other, _ := ecdh.P256().GenerateKey(rand.Reader)
	e, err := SealPIN(priv.PublicKey(), "Card:1", "4821")
	if err != nil {
		t.Fatal(err)
	}
	if pin, err := OpenPIN(priv, "Card:1", e); err != nil || pin != "4821" {
		t.Fatalf("open = %q, %v", pin, err)
	}
	if _, err := OpenPIN(priv, "Card:2", e); !errors.Is(err, ErrBadEnvelope) {
		t.Fatalf("opened for another card: %v", err)
	}
	if _, err := OpenPIN(other, "Card:1", e); !errors.Is(err, ErrBadEnvelope) {
		t.Fatalf("opened with another key: %v", err)
	}
	// One bit of the ciphertext flipped (not its last two characters set to
	// "AA", which they already were about once in a thousand runs).
	ct, err := b64.DecodeString(e.Ciphertext)
	if err != nil {
		t.Fatal(err)
	}
	ct[len(ct)-1] ^= 1
	bad := e
	bad.Ciphertext = b64.EncodeToString(ct)
	if _, err := OpenPIN(priv, "Card:1", bad); !errors.Is(err, ErrBadEnvelope) {
		t.Fatalf("altered ciphertext opened: %v", err)
	}
	if _, err := SealPIN(priv.PublicKey(), "Card:1", "12"); err == nil {
		t.Fatal("a 2-digit PIN sealed")
	}
}

func FuzzOpenPIN(f *testing.F) {
	priv, _ := ecdh.P256().GenerateKey(rand.Reader)
	e, _ := SealPIN(priv.PublicKey(), "Card:1", "4821")
	good, _ := json.Marshal(e)
	f.Add(good)
	f.Add([]byte(`{"ephemeralPublicKey":"","iv":"","ciphertext":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e PINEnvelope
		if json.Unmarshal(b, &e) != nil {
			return
		}
		pin, err := OpenPIN(priv, "Card:1", e)
		if err == nil && checkPIN(pin) != nil {
			t.Fatalf("opened a bad PIN %q", pin)
		}
	})
}
