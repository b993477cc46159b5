package wallets

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// MaxTokenAge is how old an ID token's iat may be when it is presented
// (R-EWA-09): less than 60 seconds.
const MaxTokenAge = 60 * time.Second

// tokenClockSkew tolerates an issuer clock slightly ahead of ours.
const tokenClockSkew = 5 * time.Second

// maxTokenBytes bounds an oidcToken (real ID tokens are a few KB).
const maxTokenBytes = 16 << 10

// OIDC verifies OpenID Connect ID tokens for OAUTH credentials: the issuer
// must be one the tenant accepts (its configured oauthIssuers; in sandbox
// also the sandbox issuer), and go-oidc checks the signature against the
// issuer's published keys (discovery, JWKS), the issuer and the expiry.
type OIDC struct {
	// Sandbox is the sandbox issuer (nil: none).
	Sandbox *SandboxIssuer
	// Client fetches configured issuers' documents (nil: a client with a
	// 10 s timeout).
	Client *http.Client
	// CheckIssuer vets a configured issuer's address before it is fetched
	// (the server's outbound address policy); nil accepts any.
	CheckIssuer func(ctx context.Context, env, issuer string) error

	mu        sync.Mutex
	providers map[string]*oidc.Provider
}

// oauthIdentity is what a verified ID token binds an OAUTH credential to.
type oauthIdentity struct {
	Issuer    string `json:"iss"`
	Audience  string `json:"aud"`
	Subject   string `json:"sub"`
	email     string
	nonce     string
	audiences []string
	issuedAt  time.Time
}

// identity is the credential's unique identity among the tenant's.
func (o oauthIdentity) identity() string { return o.Issuer + " " + o.Subject }

func errToken(reason string) error {
	var f apierr.Fields
	f.Add("oidcToken", apierr.Format, "%s", reason)
	return f.Err()
}

func tokenRefused(reason string) error {
	return apierr.New(apierr.CodeUnauthorized, "The OIDC token is refused: "+reason)
}

// PeekIssuer reads the iss claim of a compact JWT without verifying it (to
// choose the keys that verify it). Anything not shaped as a JWT with a
// string iss is an error.
func PeekIssuer(token string) (string, error) {
	if len(token) > maxTokenBytes {
		return "", errors.New("longer than 16 KiB")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", errors.New("not a compact JWT (three base64url parts separated by dots)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", errors.New("payload is not base64url")
	}
	var claims struct {
		Issuer *string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", errors.New("payload is not a JSON object")
	}
	if claims.Issuer == nil || *claims.Issuer == "" {
		return "", errors.New("payload has no iss")
	}
	return *claims.Issuer, nil
}

// acceptedIssuer is the tenant's issuer iss and its client ids (empty: any
// audience, the sandbox issuer unless configured), or INVALID_INPUT.
func (o *OIDC) acceptedIssuer(t store.Tenant, cfg *platformconfig.EmbeddedWalletConfig, iss string) ([]string, error) {
	sandboxIssuer := o.Sandbox != nil && iss == o.Sandbox.URL
	if sandboxIssuer && t.Env != store.EnvSandbox {
		// Sandbox tokens mint its tokens: production never trusts it, even
		// when configured.
		return nil, apierr.InvalidInput("The sandbox OIDC issuer is not accepted in production")
	}
	if cfg != nil {
		if is, ok := cfg.OAuthIssuer(iss); ok {
			return is.ClientIDs, nil
		}
	}
	if t.Env == store.EnvSandbox && o.Sandbox != nil && iss == o.Sandbox.URL {
		return nil, nil
	}
	return nil, apierr.InvalidInput("The OIDC token's issuer " + short(iss) +
		" is not one this platform accepts; add it to embeddedWalletConfig.oauthIssuers")
}

// provider returns the issuer's provider (discovery done once, then kept;
// its key set refreshes itself when a token names an unknown key).
func (o *OIDC) provider(ctx context.Context, env, iss string) (*oidc.Provider, error) {
	o.mu.Lock()
	p, ok := o.providers[iss]
	o.mu.Unlock()
	if ok {
		return p, nil
	}
	client := o.Client
	if o.Sandbox != nil && iss == o.Sandbox.URL {
		client = &http.Client{Transport: o.Sandbox.Transport, Timeout: 10 * time.Second}
	} else if o.CheckIssuer != nil {
		if err := o.CheckIssuer(ctx, env, iss); err != nil {
			return nil, err
		}
	}
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	// The key set keeps this context for later fetches: not the request's.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), client), iss)
	if err != nil {
		// The cause (which may quote the answering server) is not echoed.
		return nil, apierr.New("COUNTERPARTY_SERVER_ERROR", "The OIDC issuer's discovery document could not be read from "+short(iss)+"/.well-known/openid-configuration")
	}
	o.mu.Lock()
	if o.providers == nil {
		o.providers = map[string]*oidc.Provider{}
	}
	o.providers[iss] = p
	o.mu.Unlock()
	return p, nil
}

// verify checks an ID token for tenant t at now: shape, accepted issuer,
// signature and expiry (go-oidc), an audience among the issuer's client ids,
// a subject, and, when fresh, an iat less than MaxTokenAge old (R-EWA-09).
func (o *OIDC) verify(ctx context.Context, t store.Tenant, cfg *platformconfig.EmbeddedWalletConfig, raw string, now time.Time, fresh bool) (oauthIdentity, error) {
	iss, err := PeekIssuer(raw)
	if err != nil {
		return oauthIdentity{}, errToken("must be an OIDC ID token (JWT): " + err.Error())
	}
	clientIDs, err := o.acceptedIssuer(t, cfg, iss)
	if err != nil {
		return oauthIdentity{}, err
	}
	p, err := o.provider(ctx, t.Env, iss)
	if err != nil {
		return oauthIdentity{}, err
	}
	tok, err := p.Verifier(&oidc.Config{SkipClientIDCheck: true, Now: func() time.Time { return now }}).Verify(ctx, raw)
	if err != nil {
		if strings.Contains(err.Error(), "fetching keys") { // go-oidc's wording for an unreachable JWKS
			return oauthIdentity{}, apierr.New("COUNTERPARTY_SERVER_ERROR", "The OIDC issuer's keys could not be read from "+short(iss))
		}
		return oauthIdentity{}, tokenRefused(err.Error())
	}
	var extra struct {
		Email    string `json:"email"`
		Platform string `json:"platform"`
	}
	_ = tok.Claims(&extra)
	if o.Sandbox != nil && iss == o.Sandbox.URL && extra.Platform != t.PlatformID {
		return oauthIdentity{}, tokenRefused("the sandbox issuer signed it for another platform")
	}
	id := oauthIdentity{Issuer: tok.Issuer, Subject: tok.Subject, nonce: tok.Nonce, issuedAt: tok.IssuedAt, audiences: tok.Audience}
	if id.Audience, err = pickAudience(tok.Audience, clientIDs); err != nil {
		return oauthIdentity{}, err
	}
	if id.Subject == "" {
		return oauthIdentity{}, tokenRefused("it has no sub")
	}
	if fresh {
		if err := checkFresh(tok.IssuedAt, now); err != nil {
			return oauthIdentity{}, err
		}
	}
	id.email = extra.Email
	return id, nil
}

// pickAudience is the token's audience that is one of the issuer's client
// ids (any single audience when none are configured).
func pickAudience(aud, clientIDs []string) (string, error) {
	if len(clientIDs) == 0 {
		if len(aud) != 1 || aud[0] == "" {
			return "", tokenRefused("it must carry exactly one aud")
		}
		return aud[0], nil
	}
	for _, a := range aud {
		if slices.Contains(clientIDs, a) {
			return a, nil
		}
	}
	return "", tokenRefused("its aud names none of the platform's client ids for this issuer")
}

// checkFresh refuses a token issued MaxTokenAge or longer ago, or in the
// future (R-EWA-09).
func checkFresh(iat, now time.Time) error {
	switch {
	case iat.IsZero():
		return tokenRefused("it has no iat")
	case iat.After(now.Add(tokenClockSkew)):
		return tokenRefused("its iat is in the future")
	case now.Sub(iat) >= MaxTokenAge:
		return tokenRefused("it was issued 60 seconds or more ago (iat); sign in again for a fresh token")
	}
	return nil
}

// SandboxNonce is the nonce a sandbox ID token must carry for a verify with
// clientPublicKey (R-SBX-17): the lowercase hex SHA-256 of the UTF-8 bytes of
// clientPublicKey as sent.
func SandboxNonce(clientPublicKey string) string {
	s := sha256.Sum256([]byte(clientPublicKey))
	return hex.EncodeToString(s[:])
}

// nickname is what the credential shows: the token's email, else its sub.
func (o oauthIdentity) nickname() string {
	if o.email != "" {
		return o.email
	}
	return o.Subject
}

// oauthToken verifies an ID token for t against the tenant's issuers, at the
// store's clock.
func (s *Service) oauthToken(ctx context.Context, t store.Tenant, raw string, fresh bool) (oauthIdentity, error) {
	q := s.DB.Read()
	cfg, err := platformconfig.EmbeddedWallets(ctx, q, t)
	if err != nil {
		return oauthIdentity{}, err
	}
	return s.OIDC.verify(ctx, t, cfg, raw, q.Now(), fresh)
}

// verifyOAuth opens a session for an OAUTH credential in one call: a fresh
// ID token whose iss, aud and sub are the credential's (R-EWA-08,
// R-EWA-09), in sandbox with nonce sha256(clientPublicKey) (R-SBX-17),
// bound to clientPublicKey (R-EWA-11).
func (s *Service) verifyOAuth(ctx context.Context, t store.Tenant, credID string, req VerifyRequest) (Outcome[AuthSession], error) {
	c, err := liveCredential(ctx, s.DB.Read(), t, credID, false)
	if err != nil {
		return Outcome[AuthSession]{}, err
	}
	if c.Type != TypeOAuth {
		return Outcome[AuthSession]{}, typeMismatch(c.Type)
	}
	tok, err := s.oauthToken(ctx, t, *req.OidcToken, true)
	if err != nil {
		return Outcome[AuthSession]{}, err
	}
	if t.Env == store.EnvSandbox && tok.nonce != SandboxNonce(*req.ClientPublicKey) {
		return Outcome[AuthSession]{}, tokenRefused("in sandbox its nonce must be the lowercase hex SHA-256 of clientPublicKey")
	}
	var out Outcome[AuthSession]
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := liveCredential(ctx, tx.Q, t, credID, true)
		if err != nil {
			return err
		}
		var bound oauthIdentity
		if err := json.Unmarshal(c.Details, &bound); err != nil {
			return err
		}
		if bound.Issuer != tok.Issuer || !slices.Contains(tok.audiences, bound.Audience) || bound.Subject != tok.Subject {
			return tokenRefused("its iss, aud and sub are not those of this credential")
		}
		// A token opens one session: a replay (within its 60 s) is refused.
		sum := sha256.Sum256([]byte(*req.OidcToken))
		if err := tx.UseProof(ctx, t, store.ProofOIDCToken, hex.EncodeToString(sum[:]), c.ID, tx.Now()); errors.Is(err, store.ErrConflict) {
			return tokenRefused("it was already used to open a session; sign in again for a fresh token")
		} else if err != nil {
			return err
		}
		out.Result, err = s.newSessionTx(ctx, tx, &c, *req.ClientPublicKey)
		return err
	})
	return out, err
}
