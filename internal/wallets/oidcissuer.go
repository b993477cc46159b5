package wallets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// SandboxIssuer is the sandbox's OpenID Connect identity provider: tests and
// platforms trying OAUTH credentials have it sign ID tokens (as a real
// provider would after a login), and the service verifies them like any
// other issuer's: discovery document, JWKS, signature (go-oidc). Its
// signing key is derived from a server secret, so it survives restarts and
// is the same on every node.
type SandboxIssuer struct {
	// URL is the issuer identifier (the tokens' iss); its discovery
	// document is URL + "/.well-known/openid-configuration".
	URL string
	// Transport reaches URL (the server serves the documents itself; the
	// HTTP layer routes these requests in-process).
	Transport http.RoundTripper
	// Secret returns the 32-byte secret the signing key is derived from.
	Secret func() ([]byte, error)

	mu  sync.Mutex
	key *ecdsa.PrivateKey
	kid string
}

// signingKey derives (once) the issuer's key from its secret.
func (s *SandboxIssuer) signingKey() (*ecdsa.PrivateKey, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != nil {
		return s.key, s.kid, nil
	}
	secret, err := s.Secret()
	if err != nil {
		return nil, "", err
	}
	if s.key, s.kid, err = deriveIssuerKey(secret); err != nil {
		return nil, "", err
	}
	return s.key, s.kid, nil
}

// deriveIssuerKey derives a P-256 key and its key id from secret.
func deriveIssuerKey(secret []byte) (*ecdsa.PrivateKey, string, error) {
	if len(secret) < 32 {
		return nil, "", errors.New("wallets: sandbox issuer secret too short")
	}
	d := sha256.Sum256(append([]byte("sandbox-oidc-signing-key|"), secret...))
	n := elliptic.P256().Params().N
	k := new(big.Int).Mod(new(big.Int).SetBytes(d[:]), new(big.Int).Sub(n, big.NewInt(1)))
	k.Add(k, big.NewInt(1)) // 1 ≤ k < n
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), k.FillBytes(make([]byte, 32)))
	if err != nil {
		return nil, "", err
	}
	kid := sha256.Sum256([]byte(CompressedHex(&key.PublicKey)))
	return key, hex.EncodeToString(kid[:8]), nil
}

// Discovery is the issuer's OpenID Provider metadata.
func (s *SandboxIssuer) Discovery() map[string]any {
	return map[string]any{
		"issuer":                                s.URL,
		"jwks_uri":                              s.URL + "/jwks",
		"authorization_endpoint":                s.URL + "/authorize",
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{string(jose.ES256)},
	}
}

// JWKS is the issuer's public key set.
func (s *SandboxIssuer) JWKS() (jose.JSONWebKeySet, error) {
	key, kid, err := s.signingKey()
	if err != nil {
		return jose.JSONWebKeySet{}, err
	}
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: kid,
		Algorithm: string(jose.ES256), Use: "sig"}}}, nil
}

// TokenRequest is what a sandbox ID token says.
type TokenRequest struct {
	Subject  string
	Audience string
	Nonce    string
	Email    string
	IssuedAt time.Time
	Lifetime time.Duration
	// Platform is the platform whose sandbox token asked for the token
	// (claim "platform"); only that platform's credentials accept it.
	Platform string
}

// Sign issues an ID token (ES256 JWT).
func (s *SandboxIssuer) Sign(r TokenRequest) (string, error) {
	key, kid, err := s.signingKey()
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	claims := struct {
		jwt.Claims
		Nonce    string `json:"nonce,omitempty"`
		Email    string `json:"email,omitempty"`
		Platform string `json:"platform,omitempty"`
	}{Claims: jwt.Claims{Issuer: s.URL, Subject: r.Subject, Audience: jwt.Audience{r.Audience},
		IssuedAt: jwt.NewNumericDate(r.IssuedAt), Expiry: jwt.NewNumericDate(r.IssuedAt.Add(r.Lifetime))},
		Nonce: r.Nonce, Email: r.Email, Platform: r.Platform}
	return jwt.Signed(signer).Claims(claims).Serialize()
}
