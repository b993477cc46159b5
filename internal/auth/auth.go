// Package auth holds what a request is allowed to do: the principal behind
// its credentials and the permission rules. Secrets are stored as SHA-256
// hashes (generated secrets carry 256 bits of entropy, so a slow hash adds
// nothing but latency) and compared in constant time.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Permissions a token can hold. TRANSACT includes VIEW (R-AUTH-05, R-AUTH-06).
// MANAGE, named by the reference API, administers configuration, tokens and
// customers without moving money.
const (
	View     = "VIEW"
	Transact = "TRANSACT"
	Manage   = "MANAGE"
)

// AllPermissions is the enumeration accepted on token creation.
var AllPermissions = []string{View, Transact, Manage}

// Need is what an endpoint requires of the caller. Needs are ordered: each
// includes the ones before it.
type Need int

const (
	NeedView  Need = iota // reads
	NeedWrite             // changes non-money state
	NeedMoney             // moves money
)

// The permission model, written down once: the highest need each permission
// meets. The permissions are ordered VIEW < MANAGE < TRANSACT, each allowing
// everything the ones below it allow:
//
//	VIEW      reads
//	MANAGE    reads; changes configuration, tokens, customers, accounts…
//	TRANSACT  all of that, and moves money
//
// Every route declares its Need (httpapi's route table), and a token may
// grant or revoke only permissions it holds itself (MayGrant), so no token
// can make a token stronger than itself.
var permissionMeets = map[string]Need{
	View:     NeedView,
	Manage:   NeedWrite,
	Transact: NeedMoney,
}

// Principal is the authenticated caller.
type Principal struct {
	TokenID     string
	ClientID    string
	Tenant      store.Tenant
	Permissions []string
}

// Allows reports whether p may call an endpoint that needs n.
func (p Principal) Allows(n Need) bool {
	for _, perm := range p.Permissions {
		if meets, ok := permissionMeets[perm]; ok && meets >= n {
			return true
		}
	}
	return false
}

// Holds reports whether p holds perm, itself or through a higher one.
func (p Principal) Holds(perm string) bool {
	meets, ok := permissionMeets[perm]
	return ok && p.Allows(meets)
}

// MayGrant reports whether p may create, or delete, a token with perms: a
// token grants and revokes only permissions it holds itself. It returns the
// first permission p does not hold.
func (p Principal) MayGrant(perms []string) (missing string, ok bool) {
	for _, perm := range perms {
		if !p.Holds(perm) {
			return perm, false
		}
	}
	return "", true
}

// Sandbox reports whether p acts in the sandbox environment.
func (p Principal) Sandbox() bool { return p.Tenant.Env == store.EnvSandbox }

type ctxKey struct{}

// WithPrincipal attaches p to ctx.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal of an authenticated request.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}

// HashSecret returns the stored form of a client secret.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretMatches compares a presented secret with a stored hash in constant time.
func SecretMatches(secret, storedHash string) bool {
	got := HashSecret(secret)
	return subtle.ConstantTimeCompare([]byte(got), []byte(storedHash)) == 1
}

// KeyedPrefix starts the stored form of an operator-chosen secret.
const KeyedPrefix = "hmac-sha256:"

// TokenHashKey names the server secret (store.DB.ServerSecret) that keys
// the hashes of operator-chosen secrets.
const TokenHashKey = "token-hash-hmac"

// HashSecretKeyed returns the stored form of a secret an operator chose
// (PAYMENTS_*_TOKEN): HMAC-SHA-256 under key, a server secret sealed under
// the installation's key ring. A copy of the database alone then does not
// allow guessing a short secret offline, as a bare SHA-256 would. Secrets
// paymentsd generates have 256 bits and keep the bare SHA-256.
func HashSecretKeyed(secret string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(secret))
	return KeyedPrefix + hex.EncodeToString(m.Sum(nil))
}

// IsKeyedHash reports whether a stored hash is HashSecretKeyed's.
func IsKeyedHash(storedHash string) bool { return strings.HasPrefix(storedHash, KeyedPrefix) }

// SecretMatchesKeyed compares a presented secret with a stored keyed hash in
// constant time.
func SecretMatchesKeyed(secret, storedHash string, key []byte) bool {
	got := HashSecretKeyed(secret, key)
	return subtle.ConstantTimeCompare([]byte(got), []byte(storedHash)) == 1
}

// NewClientID returns a fresh Basic-auth username: 32 hex characters.
func NewClientID() string { return randomHex(16) }

// NewSecret returns a fresh client secret: 64 hex characters (256 bits).
func NewSecret() string { return randomHex(32) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("auth: system random source failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}
