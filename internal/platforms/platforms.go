// Package platforms creates tenants and bootstraps the default one: a platform
// with a sandbox and a production TRANSACT token and a default configuration
// for each environment.
package platforms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Created is what creating a platform returns. Tokens are "clientId:secret",
// ready for HTTP Basic; their secrets are shown this once.
type Created struct {
	PlatformID      string `json:"platformId"`
	SandboxToken    string `json:"sandboxToken"`
	ProductionToken string `json:"productionToken"`
}

// Create makes a platform with one TRANSACT token per environment.
func Create(ctx context.Context, db *store.DB, name string, isDefault bool) (Created, error) {
	return create(ctx, db, name, isDefault, nil)
}

// create makes a platform with one generated TRANSACT token per environment,
// except the environments in supplied, whose tokens the caller makes.
func create(ctx context.Context, db *store.DB, name string, isDefault bool, supplied map[string]string) (Created, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 255 {
		return Created{}, errors.New("platform name must be 1 to 255 characters")
	}
	var out Created
	err := db.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now().UTC().Truncate(time.Microsecond)
		p := store.Platform{ID: id.New(id.Platform), Name: name, IsDefault: isDefault, CreatedAt: now}
		if err := tx.InsertPlatform(ctx, p); err != nil {
			return err
		}
		out = Created{PlatformID: p.ID}
		for _, env := range []string{store.EnvSandbox, store.EnvProduction} {
			t := store.Tenant{PlatformID: p.ID, Env: env}
			if err := platformconfig.Provision(ctx, tx, t); err != nil {
				return err
			}
			if supplied[env] != "" {
				continue
			}
			clientID, secret := auth.NewClientID(), auth.NewSecret()
			if err := tx.InsertToken(ctx, store.Token{
				ID: id.New(id.Token), PlatformID: p.ID, Env: env, ClientID: clientID,
				SecretHash: auth.HashSecret(secret), Name: "Initial " + env + " token",
				Permissions: []string{auth.Transact}, CreatedAt: now, UpdatedAt: now,
			}); err != nil {
				return err
			}
			if env == store.EnvSandbox {
				out.SandboxToken = clientID + ":" + secret
			} else {
				out.ProductionToken = clientID + ":" + secret
			}
		}
		return nil
	})
	return out, err
}

// Bootstrap makes sure the default platform exists. created is non-nil only
// when this call created it (first start), so its tokens can be shown once.
func Bootstrap(ctx context.Context, db *store.DB) (p store.Platform, created *Created, err error) {
	return BootstrapWith(ctx, db, nil)
}

// BootstrapWith is Bootstrap with credentials the operator chose, by
// environment ("clientId:secret"; empty for none), which are then made to
// exist exactly (EnsureToken). On the first start a token is generated only
// for an environment without supplied credentials: created holds only those
// generated tokens, and is empty of tokens when every environment was
// supplied.
func BootstrapWith(ctx context.Context, db *store.DB, supplied map[string]string) (p store.Platform, created *Created, err error) {
	for env, creds := range supplied {
		if creds == "" {
			continue
		}
		if err := CheckCredentials(env, creds); err != nil {
			return store.Platform{}, nil, fmt.Errorf("%s token: %w", env, err)
		}
	}
	p, created, err = bootstrap(ctx, db, supplied)
	if err != nil {
		return p, created, err
	}
	for _, env := range []string{store.EnvSandbox, store.EnvProduction} {
		if supplied[env] == "" {
			continue
		}
		if err := EnsureToken(ctx, db, p.ID, env, supplied[env]); err != nil {
			return p, created, fmt.Errorf("%s token: %w", env, err)
		}
	}
	return p, created, nil
}

func bootstrap(ctx context.Context, db *store.DB, supplied map[string]string) (p store.Platform, created *Created, err error) {
	p, err = db.Read().DefaultPlatform(ctx)
	if err == nil {
		return p, nil, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.Platform{}, nil, err
	}
	c, err := create(ctx, db, "Default platform", true, supplied)
	if errors.Is(err, store.ErrConflict) {
		// Another node created it first.
		p, err = db.Read().DefaultPlatform(ctx)
		return p, nil, err
	}
	if err != nil {
		return store.Platform{}, nil, err
	}
	p, err = db.Read().GetPlatform(ctx, c.PlatformID)
	return p, &c, err
}

// EnsureToken makes the exact credentials "clientId:secret" exist as a
// TRANSACT token of platformID in env, creating or resetting the token. A
// client id that belongs to another platform is refused. The secret, chosen
// by the operator, is stored as a keyed hash (auth.HashSecretKeyed); a
// start with the same credentials rewrites a bare SHA-256 stored before.
func EnsureToken(ctx context.Context, db *store.DB, platformID, env, credentials string) error {
	clientID, secret, err := parseCredentials(credentials)
	if err != nil {
		return err
	}
	if env == store.EnvProduction {
		if err := StrongEnough(secret); err != nil {
			return err
		}
	}
	key, err := db.ServerSecret(ctx, auth.TokenHashKey)
	if err != nil {
		return err
	}
	return db.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now().UTC().Truncate(time.Microsecond)
		want := store.Token{PlatformID: platformID, Env: env, ClientID: clientID, SecretHash: auth.HashSecretKeyed(secret, key),
			Permissions: []string{auth.Transact}, UpdatedAt: now}
		cur, err := tx.TokenByClientID(ctx, clientID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			want.ID, want.Name, want.CreatedAt = id.New(id.Token), "Configured "+env+" token", now
			return tx.InsertToken(ctx, want)
		case err != nil:
			return err
		case cur.PlatformID != platformID:
			return fmt.Errorf("token id %q belongs to another platform", clientID)
		}
		return tx.ResetToken(ctx, want)
	})
}

// Minimum strength of an operator-chosen production secret: production
// credentials move real money, and a short or repetitive secret can be
// guessed over the network. (Sandbox secrets are not held to it: the README
// quickstart uses demo-sandbox:demo-secret on a laptop; both are stored as
// keyed hashes.)
const (
	minSecretLen      = 20
	minDistinctSecret = 8
)

// StrongEnough refuses an operator-chosen production secret that is short
// or made of few distinct characters.
func StrongEnough(secret string) error {
	distinct := map[rune]bool{}
	for _, r := range secret {
		distinct[r] = true
	}
	if utf8.RuneCountInString(secret) < minSecretLen || len(distinct) < minDistinctSecret {
		return fmt.Errorf("the production secret is too weak: use at least %d characters, at least %d of them different "+
			"(for example the output of `openssl rand -hex 32`)", minSecretLen, minDistinctSecret)
	}
	return nil
}

// CheckCredentials reports whether operator-chosen credentials are usable
// in env (EnsureToken): well formed, and strong enough for production.
func CheckCredentials(env, credentials string) error {
	_, secret, err := parseCredentials(credentials)
	if err == nil && env == store.EnvProduction {
		err = StrongEnough(secret)
	}
	return err
}

// parseCredentials splits operator-chosen credentials "clientId:secret".
// maxClientIDChars bounds an operator-chosen token id, in characters (the
// spec sets no length; an HTTP Basic user-id is UTF-8 text, RFC 7617).
const maxClientIDChars = 128

// validClientID: valid UTF-8, 1 to maxClientIDChars characters (not bytes),
// no white space or control characters.
func validClientID(id string) bool {
	if !utf8.ValidString(id) || utf8.RuneCountInString(id) > maxClientIDChars {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

func parseCredentials(credentials string) (clientID, secret string, err error) {
	clientID, secret, ok := strings.Cut(credentials, ":")
	if !ok || clientID == "" || secret == "" {
		return "", "", fmt.Errorf("credentials must look like <id>:<secret>")
	}
	if !validClientID(clientID) {
		return "", "", fmt.Errorf("token id must be UTF-8 text of at most %d characters without spaces or control characters",
			maxClientIDChars)
	}
	return clientID, secret, nil
}
