package carddata

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// ErrBadCSSURL: a reveal stylesheet must be an absolute https URL (http only
// for a loopback host, for local development).
var ErrBadCSSURL = errors.New("carddata: cssUrl must be an absolute https URL without credentials")

// ErrBadOrigin: pinTargetOrigin must be an origin (scheme://host[:port]).
var ErrBadOrigin = errors.New("carddata: pinTargetOrigin must be an origin such as https://app.example.com")

// CheckCSSURL validates a reveal page's optional stylesheet URL.
func CheckCSSURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || len(raw) > 2048 || u.Host == "" || u.User != nil || strings.ContainsAny(raw, "\"'<> \\\n\r") {
		return ErrBadCSSURL
	}
	if u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname())) {
		return nil
	}
	return ErrBadCSSURL
}

// CheckOrigin validates a PIN page's target origin.
func CheckOrigin(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" ||
		u.Fragment != "" || strings.ContainsAny(raw, "\"'<> ;,\\\n\r") {
		return ErrBadOrigin
	}
	if u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname())) {
		return nil
	}
	return ErrBadOrigin
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MintReveal returns the token of a reveal page for a card (the route puts
// it in panEmbedUrl) and its claims.
func (s *Service) MintReveal(ctx context.Context, t store.Tenant, cardID, cssURL string) (string, Claims, error) {
	if err := CheckCSSURL(cssURL); err != nil {
		return "", Claims{}, err
	}
	return s.mint(ctx, Claims{Kind: KindReveal, PlatformID: t.PlatformID, Env: t.Env, CardID: cardID,
		CSSURL: cssURL}, RevealTTL)
}

// MintPINEntry returns the token of a PIN page for a card, framed by origin.
func (s *Service) MintPINEntry(ctx context.Context, t store.Tenant, cardID, origin string) (string, Claims, error) {
	if err := CheckOrigin(origin); err != nil {
		return "", Claims{}, err
	}
	return s.mint(ctx, Claims{Kind: KindPINPage, PlatformID: t.PlatformID, Env: t.Env, CardID: cardID,
		Origin: strings.TrimSuffix(origin, "/")}, PINEntryTTL)
}

func (s *Service) mint(ctx context.Context, c Claims, ttl time.Duration) (string, Claims, error) {
	k, err := s.loadKeys(ctx)
	if err != nil {
		return "", Claims{}, err
	}
	c.Expires = s.now().Add(ttl).Unix()
	return k.url.sign(c)
}

// Check verifies a token's signature, kind and expiry without using it up.
func (s *Service) Check(ctx context.Context, token, kind string) (Claims, error) {
	k, err := s.loadKeys(ctx)
	if err != nil {
		return Claims{}, err
	}
	return k.url.verify(token, kind, s.now())
}

// Use verifies a token and burns it: a second Use of the same token (by any
// node) returns ErrTokenUsed.
func (s *Service) Use(ctx context.Context, token, kind string) (Claims, error) {
	c, err := s.Check(ctx, token, kind)
	if err != nil {
		return Claims{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return burn(ctx, tx, c, s.now()) })
	return c, err
}

func burn(ctx context.Context, tx *store.Tx, c Claims, now time.Time) error {
	fresh, err := tx.BurnCardURL(ctx, c.JTI, c.Kind, c.CardID, c.ExpiresAt(), now)
	if err != nil {
		return err
	}
	if !fresh {
		return ErrTokenUsed
	}
	return nil
}

// OpenPINPage uses up a PIN page token and returns its claims and the
// token of the page's one submission.
func (s *Service) OpenPINPage(ctx context.Context, token string) (Claims, string, error) {
	c, err := s.Use(ctx, token, KindPINPage)
	if err != nil {
		return Claims{}, "", err
	}
	submit, _, err := s.mint(ctx, Claims{Kind: KindPINSubmit, PlatformID: c.PlatformID, Env: c.Env,
		CardID: c.CardID, Origin: c.Origin}, PINSubmitTTL)
	return c, submit, err
}

// Tenant is the tenant a token was minted for.
func (c Claims) Tenant() store.Tenant { return store.Tenant{PlatformID: c.PlatformID, Env: c.Env} }
