package keyring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustKey(t *testing.T, id string) Key {
	t.Helper()
	k, err := Generate(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustRing(t *testing.T, active Key, older ...Key) *Keyring {
	t.Helper()
	r, err := New(active, older...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpen(t *testing.T) {
	r := mustRing(t, mustKey(t, "a"))
	ad := []byte("server_secrets/cursor")
	sealed, err := r.Seal([]byte("the secret"), ad)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("the secret")) || !strings.HasPrefix(string(sealed), "kr1:a:") || !IsSealed(sealed) {
		t.Fatalf("sealed value %q", sealed)
	}
	for _, c := range sealed {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("sealed value is not printable ASCII: %q", sealed)
		}
	}
	got, err := r.Open(sealed, ad)
	if err != nil || string(got) != "the secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	again, _ := r.Seal([]byte("the secret"), ad)
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one plaintext are equal: the nonce is not random")
	}
}

func TestOpen_Refuses(t *testing.T) {
	r := mustRing(t, mustKey(t, "a"))
	ad := []byte("row-1")
	sealed, _ := r.Seal([]byte("x"), ad)
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-2] ^= 1
	cases := map[string][]byte{
		"other associated data": nil,
		"altered":               flipped,
		"clear value":           []byte("whsec_abc"),
		"truncated":             sealed[:len(sealed)-10],
		"bad base64":            []byte("kr1:a:!!!"),
	}
	for name, v := range cases {
		use := ad
		if name == "other associated data" {
			v, use = sealed, []byte("row-2")
		}
		if _, err := r.Open(v, use); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: Open err = %v, want ErrOpen", name, err)
		}
	}
	other := mustRing(t, mustKey(t, "b"))
	if _, err := other.Open(sealed, ad); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	sameID := mustRing(t, mustKey(t, "a")) // another key under the same id
	if _, err := sameID.Open(sealed, ad); !errors.Is(err, ErrOpen) {
		t.Errorf("wrong key with the same id: %v", err)
	}
}

// Rotation: the new key seals, the old one still opens what it sealed, and
// Current says which values need re-sealing.
func TestRotation(t *testing.T) {
	old := mustKey(t, "old")
	before := mustRing(t, old)
	v1, _ := before.Seal([]byte("v1"), nil)
	after := mustRing(t, mustKey(t, "new"), old)
	if after.ActiveID() != "new" || !slicesEqual(after.IDs(), []string{"new", "old"}) {
		t.Fatalf("ring %v", after.IDs())
	}
	if got, err := after.Open(v1, nil); err != nil || string(got) != "v1" {
		t.Fatalf("old value under the rotated ring: %q %v", got, err)
	}
	if after.Current(v1) || !before.Current(v1) {
		t.Fatal("Current: a value sealed by the old key is not current after rotation")
	}
	v2, _ := after.Seal([]byte("v2"), nil)
	if id, _ := KeyID(v2); id != "new" || !after.Current(v2) {
		t.Fatalf("new seals use key %q", id)
	}
	if _, err := before.Open(v2, nil); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("the old ring opened a value of the new key: %v", err)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func TestParse(t *testing.T) {
	a, b := mustKey(t, "a"), mustKey(t, "b")
	for _, text := range []string{a.Encode() + "," + b.Encode(), "# comment\n" + a.Encode() + "\n\n " + b.Encode() + " \n"} {
		r, err := Parse(text)
		if err != nil || r.ActiveID() != "a" || len(r.IDs()) != 2 {
			t.Fatalf("Parse(%q) = %v, %v", text, r, err)
		}
	}
	bad := map[string]string{
		"":                            "no key",
		"nocolon":                     "want id:base64",
		"a:not base64!":               "base64",
		"a:c2hvcnQ=":                  "32 random bytes",
		"b@d:" + a.Encode()[2:]:       "key id",
		a.Encode() + "," + a.Encode(): "twice",
	}
	for text, want := range bad {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) err = %v, want %q", text, err, want)
		}
		if _, err := Parse(text); err != nil && strings.Contains(err.Error(), a.Encode()[2:]) {
			t.Errorf("error message shows key material: %v", err)
		}
	}
	if s := a.String(); strings.Contains(s, a.Encode()[2:]) {
		t.Errorf("Key.String shows the secret: %s", s)
	}
}

func TestLoadOrCreateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "payments.db.keys")
	r1, created, err := LoadOrCreateFile(path)
	if err != nil || !created {
		t.Fatalf("first: created=%v err=%v", created, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", info.Mode().Perm(), err)
	}
	sealed, _ := r1.Seal([]byte("s"), nil)
	r2, created, err := LoadOrCreateFile(path)
	if err != nil || created {
		t.Fatalf("second: created=%v err=%v", created, err)
	}
	if got, err := r2.Open(sealed, nil); err != nil || string(got) != "s" {
		t.Fatalf("reloaded ring cannot open: %v", err)
	}
	// Rotation in the file: a new first key, the old one kept.
	newID, err := PrependNewKey(path)
	if err != nil {
		t.Fatal(err)
	}
	r3, err := LoadFile(path)
	if err != nil || r3.ActiveID() != newID || len(r3.IDs()) != 2 || r3.IDs()[1] != r1.ActiveID() {
		t.Fatalf("after PrependNewKey: %v %v", r3.IDs(), err)
	}
	if _, err := r3.Open(sealed, nil); err != nil {
		t.Fatalf("old value after prepend: %v", err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("mode after prepend %v", info.Mode().Perm())
	}
	os.Chmod(path, 0o644)
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("world-readable key file: %v", err)
	}
}
