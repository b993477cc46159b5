package signing

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names. http.Header canonicalises them
// (Webhook-Id, …); HTTP header names are case-insensitive.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

const (
	// SecretPrefix marks a serialised Standard Webhooks secret.
	SecretPrefix = "whsec_"
	// SecretSize is the number of random bytes in a generated secret.
	SecretSize = 32
	// MinSecretSize and MaxSecretSize bound the key length the specification
	// allows (at least 192 bits, at most 512 bits).
	MinSecretSize = 24
	MaxSecretSize = 64

	// DefaultTolerance is how far webhook-timestamp may be from the
	// receiver's clock, in either direction, before Verify rejects it.
	DefaultTolerance = 5 * time.Minute

	// signatureVersion prefixes each HMAC-SHA256 entry in webhook-signature.
	signatureVersion = "v1"
	// maxIDLen bounds webhook-id; ours are "<Type>:<uuid>".
	maxIDLen = 256
	// maxTimestamp (about the year 36812) keeps time arithmetic far from
	// overflow; anything later is simply "too new".
	maxTimestamp = 1 << 40
)

// Errors returned by this file. Verify wraps them, so test with errors.Is.
var (
	ErrInvalidSecret       = errors.New("signing: invalid webhook secret")
	ErrNoSecrets           = errors.New("signing: no webhook secret")
	ErrInvalidID           = errors.New("signing: invalid webhook id")
	ErrMissingHeader       = errors.New("signing: missing header")
	ErrInvalidTimestamp    = errors.New("signing: invalid webhook timestamp")
	ErrTimestampTooOld     = errors.New("signing: webhook timestamp too old")
	ErrTimestampTooNew     = errors.New("signing: webhook timestamp too new")
	ErrNoMatchingSignature = errors.New("signing: no matching webhook signature")
)

// HeaderError reports a missing or malformed header. Err is
// ErrMissingHeader, ErrInvalidID or ErrInvalidTimestamp.
type HeaderError struct {
	Header string
	Err    error
}

func (e *HeaderError) Error() string { return fmt.Sprintf("%v (%s)", e.Err, e.Header) }
func (e *HeaderError) Unwrap() error { return e.Err }

// Secret is an endpoint's Standard Webhooks signing key. Its String method
// redacts the key; use Encode for the "whsec_…" form shown to the user.
// The zero Secret is invalid: Sign and Verify refuse it.
type Secret struct {
	key []byte
}

// GenerateSecret returns a new secret of SecretSize random bytes.
func GenerateSecret() Secret {
	b := make([]byte, SecretSize)
	// crypto/rand.Read always fills b and never returns an error (it
	// crashes the program if the system source fails).
	rand.Read(b)
	return Secret{key: b}
}

// NewSecret wraps raw key bytes (copied), which must be MinSecretSize to
// MaxSecretSize long.
func NewSecret(key []byte) (Secret, error) {
	if len(key) < MinSecretSize || len(key) > MaxSecretSize {
		return Secret{}, fmt.Errorf("%w: key is %d bytes, want %d to %d", ErrInvalidSecret, len(key), MinSecretSize, MaxSecretSize)
	}
	return Secret{key: append([]byte(nil), key...)}, nil
}

// ParseSecret reads "whsec_" followed by the standard (padded) base64 of the
// key bytes. Like the reference libraries it also accepts the base64 without
// the prefix, and it ignores surrounding white space left by copy and paste.
func ParseSecret(s string) (Secret, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), SecretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return Secret{}, fmt.Errorf("%w: not base64 after %q", ErrInvalidSecret, SecretPrefix)
	}
	return NewSecret(key)
}

// Encode returns "whsec_" + standard base64 (with padding) of the key.
func (s Secret) Encode() string {
	if s.IsZero() {
		return ""
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(s.key)
}

// Bytes returns a copy of the key bytes.
func (s Secret) Bytes() []byte { return append([]byte(nil), s.key...) }

// IsZero reports whether s holds no key.
func (s Secret) IsZero() bool { return len(s.key) == 0 }

// Equal reports whether s and o hold the same key (in constant time).
func (s Secret) Equal(o Secret) bool { return hmac.Equal(s.key, o.key) }

// String redacts the key so that secrets do not leak into logs.
func (s Secret) String() string {
	if s.IsZero() {
		return "whsec_(none)"
	}
	return "whsec_(redacted)"
}

// GoString redacts the key for %#v as well.
func (s Secret) GoString() string { return "signing.Secret{" + s.String() + "}" }

// Headers are the three Standard Webhooks headers of one delivery attempt.
type Headers struct {
	ID        string // webhook-id: the event id, the same on every retry
	Timestamp string // webhook-timestamp: unix seconds of this attempt
	Signature string // webhook-signature: "v1,<base64>" entries, space separated
}

// Apply sets the headers on h, replacing any previous values.
func (hs Headers) Apply(h http.Header) {
	h.Set(HeaderID, hs.ID)
	h.Set(HeaderTimestamp, hs.Timestamp)
	h.Set(HeaderSignature, hs.Signature)
}

// Header returns the headers as a new http.Header.
func (hs Headers) Header() http.Header {
	h := make(http.Header, 3)
	hs.Apply(h)
	return h
}

// Sign computes the Standard Webhooks headers for one delivery attempt.
//
// id identifies the event and must stay the same across retries (receivers
// use it for deduplication); ts is the time of this attempt and is sent as
// whole unix seconds. There is one "v1,<base64 HMAC-SHA256>" entry per
// secret, in the order given: during a secret rotation pass both the new and
// the old secret so that receivers holding either one accept the delivery.
func Sign(id string, ts time.Time, body []byte, secrets ...Secret) (Headers, error) {
	if err := checkID(id); err != nil {
		return Headers{}, err
	}
	if err := checkSecrets(secrets); err != nil {
		return Headers{}, err
	}
	unix := ts.Unix()
	if unix < 0 || unix > maxTimestamp {
		return Headers{}, fmt.Errorf("%w: %d is out of range", ErrInvalidTimestamp, unix)
	}
	tsStr := strconv.FormatInt(unix, 10)
	entries := make([]string, len(secrets))
	for i, s := range secrets {
		entries[i] = signatureVersion + "," + base64.StdEncoding.EncodeToString(computeMAC(s.key, id, tsStr, body))
	}
	return Headers{ID: id, Timestamp: tsStr, Signature: strings.Join(entries, " ")}, nil
}

// Verify checks the Standard Webhooks headers in h against body.
//
// It accepts the delivery when the webhook-timestamp is within tolerance of
// now in either direction (tolerance <= 0 means DefaultTolerance) and any
// "v1," entry of webhook-signature equals, compared in constant time, the
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" under any of
// secrets. Entries with other versions (e.g. "v1a,") or malformed entries are
// skipped. Values of repeated webhook-signature header lines are combined.
//
// Errors: ErrNoSecrets or ErrInvalidSecret for bad configuration; a
// *HeaderError wrapping ErrMissingHeader, ErrInvalidID or
// ErrInvalidTimestamp; ErrTimestampTooOld or ErrTimestampTooNew; and
// ErrNoMatchingSignature.
func Verify(secrets []Secret, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	return VerifyValues(secrets, h.Get(HeaderID), h.Get(HeaderTimestamp),
		strings.Join(h.Values(HeaderSignature), " "), body, now, tolerance)
}

// VerifyValues is Verify for header values obtained some other way.
func VerifyValues(secrets []Secret, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if err := checkSecrets(secrets); err != nil {
		return err
	}
	// Optional white space around a field value is not part of it (RFC 9110).
	id = strings.Trim(id, " \t")
	timestamp = strings.Trim(timestamp, " \t")
	for _, hv := range [...]struct{ name, value string }{
		{HeaderID, id}, {HeaderTimestamp, timestamp}, {HeaderSignature, strings.Trim(signature, " \t")},
	} {
		if hv.value == "" {
			return &HeaderError{Header: hv.name, Err: ErrMissingHeader}
		}
	}
	// A "." in the id would make "{id}.{timestamp}.{body}" ambiguous: the
	// signature of one (id, timestamp, body) could pass for another.
	if err := checkID(id); err != nil {
		return &HeaderError{Header: HeaderID, Err: ErrInvalidID}
	}
	unix, ok := parseTimestamp(timestamp)
	if !ok {
		return &HeaderError{Header: HeaderTimestamp, Err: ErrInvalidTimestamp}
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if unix > maxTimestamp {
		return fmt.Errorf("%w: %s", ErrTimestampTooNew, timestamp)
	}
	sent := time.Unix(unix, 0)
	if d := now.Sub(sent); d > tolerance {
		return fmt.Errorf("%w: sent %s before now, tolerance %s", ErrTimestampTooOld, d, tolerance)
	}
	if d := sent.Sub(now); d > tolerance {
		return fmt.Errorf("%w: sent %s after now, tolerance %s", ErrTimestampTooNew, d, tolerance)
	}

	expected := make([][]byte, len(secrets))
	for i, s := range secrets {
		expected[i] = computeMAC(s.key, id, timestamp, body)
	}
	for _, entry := range strings.Fields(signature) {
		version, b64, ok := strings.Cut(entry, ",")
		if !ok || version != signatureVersion {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		for _, want := range expected {
			// hmac.Equal takes time independent of where the inputs differ.
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrNoMatchingSignature
}

// computeMAC returns HMAC-SHA256(key, id + "." + timestamp + "." + body).
func computeMAC(key []byte, id, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	io.WriteString(m, id)
	io.WriteString(m, ".")
	io.WriteString(m, timestamp)
	io.WriteString(m, ".")
	m.Write(body)
	return m.Sum(nil)
}

// checkID accepts 1 to maxIDLen visible ASCII characters other than ".".
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: length %d", ErrInvalidID, len(id))
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || c == '.' {
			return fmt.Errorf("%w: byte %#x at %d", ErrInvalidID, c, i)
		}
	}
	return nil
}

func checkSecrets(secrets []Secret) error {
	if len(secrets) == 0 {
		return ErrNoSecrets
	}
	for i, s := range secrets {
		// An empty key would let anyone compute the signature.
		if s.IsZero() {
			return fmt.Errorf("%w: secret %d is empty", ErrInvalidSecret, i)
		}
	}
	return nil
}

// parseTimestamp accepts the canonical decimal form of a non-negative int64:
// digits only, no sign, no leading zeros.
func parseTimestamp(s string) (int64, bool) {
	if s == "" || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
