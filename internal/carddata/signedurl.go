package carddata

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Kinds of signed token: the hosted reveal page, the hosted PIN page, and
// the one PIN submission a loaded PIN page may make.
const (
	KindReveal    = "reveal"
	KindPINPage   = "pin"
	KindPINSubmit = "pin-submit"
)

// Claims is what a signed page token says. Every token is single-use: its
// JTI is burned in the store the first time it is accepted.
type Claims struct {
	Kind       string `json:"k"`
	PlatformID string `json:"p"`
	Env        string `json:"e"`
	CardID     string `json:"c"`
	JTI        string `json:"j"`
	Expires    int64  `json:"x"`             // Unix seconds
	CSSURL     string `json:"css,omitempty"` // reveal: the platform's stylesheet
	Origin     string `json:"o,omitempty"`   // PIN page: the platform origin allowed to frame it
}

// ExpiresAt is the claims' expiry as a time.
func (c Claims) ExpiresAt() time.Time { return time.Unix(c.Expires, 0).UTC() }

// Errors of signed tokens.
var (
	ErrTokenInvalid = errors.New("carddata: the link is not valid")
	ErrTokenExpired = errors.New("carddata: the link has expired")
	ErrTokenUsed    = errors.New("carddata: the link was already used")
)

// tokenDomain separates these HMACs from any other use of the key.
const tokenDomain = "paymentsd-card-page-v1."

// signer signs and checks page tokens: base64url(JSON claims) "."
// base64url(HMAC-SHA256(key, domain ‖ payload)).
type signer struct{ key []byte }

// newJTI returns a random 128-bit token id.
func newJTI() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (s signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(tokenDomain + payload))
	return m.Sum(nil)
}

// sign returns the token of c (a fresh JTI is set when empty).
func (s signer) sign(c Claims) (string, Claims, error) {
	if c.JTI == "" {
		j, err := newJTI()
		if err != nil {
			return "", c, err
		}
		c.JTI = j
	}
	body, err := json.Marshal(c)
	if err != nil {
		return "", c, err
	}
	payload := b64.EncodeToString(body)
	return payload + "." + b64.EncodeToString(s.mac(payload)), c, nil
}

// verify checks a token's signature, kind and expiry (not its single use:
// the service burns the JTI).
func (s signer) verify(token, kind string, now time.Time) (Claims, error) {
	payload, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 4096 {
		return Claims{}, ErrTokenInvalid
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return Claims{}, ErrTokenInvalid
	}
	body, err := b64.DecodeString(payload)
	if err != nil {
		return Claims{}, ErrTokenInvalid
	}
	var c Claims
	if err := json.Unmarshal(body, &c); err != nil || c.Kind != kind || c.JTI == "" || c.CardID == "" {
		return Claims{}, ErrTokenInvalid
	}
	if !now.Before(c.ExpiresAt()) {
		return Claims{}, ErrTokenExpired
	}
	return c, nil
}
