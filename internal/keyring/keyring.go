// Package keyring seals secrets at rest under key-encryption keys (KEKs)
// the operator supplies: AES-256-GCM with a random 96-bit nonce, the key's
// id written in front of every sealed value so that rotation works. The
// newest key (the active one) seals; any key of the ring opens what it
// sealed. Rotating is: put a new key first, keep the old ones, re-seal every
// stored value (paymentsd does that at start-up and in `paymentsd keys
// rotate`), then drop the old keys.
//
// A sealed value is printable ASCII, so it fits a TEXT column:
//
//	kr1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>
//
// Associated data binds a value to where it is stored (a table and a row
// name): a value copied to another row does not open there.
package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// KeySize is the length of a KEK: AES-256.
const KeySize = 32

// prefix starts every sealed value (format version 1).
const prefix = "kr1:"

var (
	// ErrUnknownKey: the value was sealed under a key this ring lacks.
	ErrUnknownKey = errors.New("keyring: sealed under a key that is not in the key ring")
	// ErrOpen: the value is not a sealed value, or was altered, or its
	// associated data differs.
	ErrOpen = errors.New("keyring: cannot open sealed value (corrupt, altered, or sealed for another place)")
)

// idRE is what a key id may be: short, printable, no separator.
var idRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Key is one key-encryption key.
type Key struct {
	ID     string
	Secret []byte // KeySize bytes
}

// String hides the secret (a Key printed in a log says only its id).
func (k Key) String() string { return "keyring.Key{ID: " + k.ID + "}" }

// Generate makes a new random key named id.
func Generate(id string) (Key, error) {
	if !idRE.MatchString(id) {
		return Key{}, fmt.Errorf("keyring: key id %q: use 1 to 32 letters, digits, '-' or '_'", id)
	}
	k := Key{ID: id, Secret: make([]byte, KeySize)}
	_, err := rand.Read(k.Secret)
	return k, err
}

// Encode writes k as "id:base64", the form Parse reads.
func (k Key) Encode() string {
	return k.ID + ":" + base64.StdEncoding.EncodeToString(k.Secret)
}

// Keyring holds the active key and the older keys that still open.
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
	order  []string // active first
}

// New makes a ring whose first key seals; all of them open. Ids must differ.
func New(active Key, older ...Key) (*Keyring, error) {
	r := &Keyring{active: active.ID, aeads: map[string]cipher.AEAD{}}
	for _, k := range append([]Key{active}, older...) {
		if !idRE.MatchString(k.ID) {
			return nil, fmt.Errorf("keyring: key id %q: use 1 to 32 letters, digits, '-' or '_'", k.ID)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("keyring: key %s is %d bytes; a key is %d random bytes (base64)", k.ID, len(k.Secret), KeySize)
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("keyring: key id %s appears twice", k.ID)
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		r.aeads[k.ID] = aead
		r.order = append(r.order, k.ID)
	}
	return r, nil
}

// Parse reads keys written as "id:base64", one per line or separated by
// commas; the first is the active key. Blank lines and lines starting with
// '#' are skipped.
func Parse(text string) (*Keyring, error) {
	var fields []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			fields = append(fields, strings.Split(line, ",")...)
		}
	}
	var keys []Key
	for _, field := range fields {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		id, b64, ok := strings.Cut(field, ":")
		if !ok {
			return nil, fmt.Errorf("keyring: %q: want id:base64 (generate one with `paymentsd keys generate`)", redact(field))
		}
		secret, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %s: not standard base64", id)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	if len(keys) == 0 {
		return nil, errors.New("keyring: no key given")
	}
	return New(keys[0], keys[1:]...)
}

// redact keeps a malformed entry out of error messages beyond its start.
func redact(s string) string {
	if len(s) > 6 {
		return s[:6] + "…"
	}
	return s
}

// ActiveID is the id of the key that seals.
func (r *Keyring) ActiveID() string { return r.active }

// IDs lists the ring's key ids, the active one first.
func (r *Keyring) IDs() []string { return append([]string(nil), r.order...) }

// Seal encrypts plaintext under the active key, bound to associatedData.
func (r *Keyring) Seal(plaintext, associatedData []byte) ([]byte, error) {
	aead := r.aeads[r.active]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	ct := aead.Seal(nonce, nonce, plaintext, associatedData)
	out := make([]byte, 0, len(prefix)+len(r.active)+1+base64.RawURLEncoding.EncodedLen(len(ct)))
	out = append(out, prefix...)
	out = append(out, r.active...)
	out = append(out, ':')
	return base64.RawURLEncoding.AppendEncode(out, ct), nil
}

// Open decrypts a value Seal made with any key of the ring.
func (r *Keyring) Open(sealed, associatedData []byte) ([]byte, error) {
	id, body, ok := split(sealed)
	if !ok {
		return nil, ErrOpen
	}
	aead, ok := r.aeads[id]
	if !ok {
		return nil, fmt.Errorf("%w (key id %s)", ErrUnknownKey, id)
	}
	ct, err := base64.RawURLEncoding.DecodeString(string(body))
	if err != nil || len(ct) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrOpen
	}
	pt, err := aead.Open(nil, ct[:aead.NonceSize()], ct[aead.NonceSize():], associatedData)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

// IsSealed reports whether b has the form of a sealed value (it may still
// fail to open). Stored values that are not sealed are from before
// encryption at rest and are sealed by the next re-encryption.
func IsSealed(b []byte) bool {
	_, _, ok := split(b)
	return ok
}

// KeyID returns the id of the key that sealed b.
func KeyID(sealed []byte) (string, bool) {
	id, _, ok := split(sealed)
	return id, ok
}

// Current reports whether b is sealed under the active key, i.e. needs no
// re-encryption.
func (r *Keyring) Current(b []byte) bool {
	id, ok := KeyID(b)
	return ok && id == r.active
}

func split(b []byte) (id string, body []byte, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(prefix))
	if !ok {
		return "", nil, false
	}
	i := bytes.IndexByte(rest, ':')
	if i < 1 || !idRE.Match(rest[:i]) {
		return "", nil, false
	}
	return string(rest[:i]), rest[i+1:], true
}
