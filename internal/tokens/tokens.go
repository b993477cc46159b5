// Package tokens manages API credentials: creation (the secret is shown once),
// listing, lookup, deletion, and authentication of Basic credentials.
package tokens

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Token is the API representation (ApiToken). ClientSecret is set only in the
// response that creates the token.
type Token struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Permissions  []string   `json:"permissions"`
	ClientID     string     `json:"clientId"`
	ClientSecret string     `json:"clientSecret,omitempty"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
}

func fromRow(r store.Token) Token {
	return Token{ID: r.ID, Name: r.Name, Permissions: r.Permissions, ClientID: r.ClientID,
		ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// Service implements the token rules.
type Service struct {
	DB *store.DB
}

// CreateRequest is the body of POST /tokens.
type CreateRequest struct {
	Name        *string    `json:"name"`
	Permissions []string   `json:"permissions"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

// Limits on token fields.
const MaxNameLength = 255

// Validate lists every invalid field; it never changes req.
func (req CreateRequest) Validate(now time.Time) error {
	var f apierr.Fields
	switch {
	case req.Name == nil:
		f.Add("name", apierr.Required, "is required")
	case strings.TrimSpace(*req.Name) == "":
		f.Add("name", apierr.MinLength, "must not be blank")
	case len([]rune(*req.Name)) > MaxNameLength:
		f.Add("name", apierr.MaxLength, "must be at most %d characters", MaxNameLength)
	}
	if req.Permissions == nil {
		f.Add("permissions", apierr.Required, "is required")
	} else if len(req.Permissions) == 0 {
		f.Add("permissions", apierr.MinLength, "must grant at least one permission")
	}
	seen := map[string]bool{}
	for i, p := range req.Permissions {
		field := fmt.Sprintf("permissions[%d]", i)
		if !slices.Contains(auth.AllPermissions, p) {
			f.Add(field, apierr.Enum, "must be one of %s", strings.Join(auth.AllPermissions, ", "))
		} else if seen[p] {
			f.Add(field, apierr.UniqueItems, "%s is listed twice", p)
		}
		seen[p] = true
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(now) {
		f.Add("expiresAt", apierr.Minimum, "must be in the future")
	}
	return f.Err()
}

// Create issues a token in the caller's tenant and returns it with its
// secret. The caller may grant only permissions it holds (auth.MayGrant).
func (s *Service) Create(ctx context.Context, caller auth.Principal, req CreateRequest) (Token, error) {
	now := s.DB.Now()
	if err := req.Validate(now); err != nil {
		return Token{}, err
	}
	if perm, ok := caller.MayGrant(req.Permissions); !ok {
		return Token{}, apierr.Forbidden(fmt.Sprintf("This token does not hold %s, so it may not grant it", perm))
	}
	t := caller.Tenant
	secret := auth.NewSecret()
	var exp *time.Time
	if req.ExpiresAt != nil {
		e := req.ExpiresAt.UTC().Truncate(time.Microsecond)
		exp = &e
	}
	row := store.Token{
		ID: id.New(id.Token), PlatformID: t.PlatformID, Env: t.Env, ClientID: auth.NewClientID(),
		SecretHash: auth.HashSecret(secret), Name: strings.TrimSpace(*req.Name), Permissions: req.Permissions,
		ExpiresAt: exp, CreatedAt: now.UTC().Truncate(time.Microsecond),
	}
	row.UpdatedAt = row.CreatedAt
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error { return tx.InsertToken(ctx, row) }); err != nil {
		return Token{}, err
	}
	tok := fromRow(row)
	tok.ClientSecret = secret
	return tok, nil
}

// Get returns a live token of the tenant.
func (s *Service) Get(ctx context.Context, t store.Tenant, tokenID string) (Token, error) {
	row, err := s.DB.Read().GetToken(ctx, t, tokenID)
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, apierr.NotFound(apierr.CodeTokenNotFound, "Token "+tokenID)
	}
	if err != nil {
		return Token{}, err
	}
	return fromRow(row), nil
}

// Delete revokes a token; it stops authenticating at once. The caller may
// revoke only a token whose permissions it holds (auth.MayGrant).
func (s *Service) Delete(ctx context.Context, caller auth.Principal, tokenID string) error {
	t := caller.Tenant
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		target, err := tx.GetToken(ctx, t, tokenID)
		if err != nil {
			return err
		}
		if perm, ok := caller.MayGrant(target.Permissions); !ok {
			return apierr.Forbidden(fmt.Sprintf("Token %s holds %s, which this token does not hold, so it may not revoke it",
				tokenID, perm))
		}
		return tx.DeleteToken(ctx, t, tokenID, tx.Now())
	})
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound(apierr.CodeTokenNotFound, "Token "+tokenID)
	}
	return err
}

// List returns one page of the tenant's live tokens.
func (s *Service) List(ctx context.Context, t store.Tenant, f store.TokenFilter, after string, limit int) ([]Token, int, error) {
	rows, total, err := s.DB.Read().ListTokens(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Token, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, total, nil
}

// Authenticate resolves Basic credentials to a principal. Unknown ids, wrong
// secrets, deleted and expired tokens all fail the same way, so a caller learns
// nothing about which part was wrong.
func (s *Service) Authenticate(ctx context.Context, clientID, secret string) (auth.Principal, error) {
	if clientID == "" || secret == "" {
		return auth.Principal{}, apierr.Unauthorized()
	}
	row, err := s.DB.Read().TokenByClientID(ctx, clientID)
	return s.check(ctx, row, err, secret)
}

// AuthenticateSeeing is Authenticate that also answers ahead, in the
// same statement as the credential (store.TokenByClientIDSeeing): whether
// the principal's tenant already holds the Idempotency-Key ahead.Key, and
// that tenant's internal accounts among ahead.AccountIDs. What it reports
// is what the request's own reads would have found a moment later; the
// key's record at the commit still decides a race. A refused credential
// reports nothing.
func (s *Service) AuthenticateSeeing(ctx context.Context, clientID, secret string, ahead store.ReadAhead) (auth.Principal, store.Seen, error) {
	if clientID == "" || secret == "" {
		return auth.Principal{}, store.Seen{}, apierr.Unauthorized()
	}
	row, seen, err := s.DB.Read().TokenByClientIDSeeing(ctx, clientID, ahead)
	p, err := s.check(ctx, row, err, secret)
	if err != nil {
		return p, store.Seen{}, err
	}
	return p, seen, nil
}

// check answers a credential lookup: the principal of a live token whose
// secret matches, else 401.
func (s *Service) check(ctx context.Context, row store.Token, err error, secret string) (auth.Principal, error) {
	if errors.Is(err, store.ErrNotFound) {
		// Spend the same hashing work as a real comparison.
		auth.SecretMatches(secret, strings.Repeat("0", 64))
		return auth.Principal{}, apierr.Unauthorized()
	}
	if err != nil {
		return auth.Principal{}, err
	}
	matches := auth.SecretMatches(secret, row.SecretHash)
	if auth.IsKeyedHash(row.SecretHash) { // an operator-chosen secret (PAYMENTS_*_TOKEN)
		key, err := s.DB.ServerSecret(ctx, auth.TokenHashKey)
		if err != nil {
			return auth.Principal{}, err
		}
		matches = auth.SecretMatchesKeyed(secret, row.SecretHash, key)
	}
	if !matches || row.DeletedAt != nil ||
		(row.ExpiresAt != nil && !s.DB.Now().Before(*row.ExpiresAt)) {
		return auth.Principal{}, apierr.Unauthorized()
	}
	return principalOf(row), nil
}

// PrincipalOf re-reads a token of the tenant and returns its principal while
// it is live: a deleted or expired token is 401, as in Authenticate. The
// dashboard calls it on every request of a signed-in session, so revoking
// the token ends the session at once.
func (s *Service) PrincipalOf(ctx context.Context, t store.Tenant, tokenID string) (auth.Principal, error) {
	row, err := s.DB.Read().GetToken(ctx, t, tokenID)
	if errors.Is(err, store.ErrNotFound) {
		return auth.Principal{}, apierr.Unauthorized()
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if row.ExpiresAt != nil && !s.DB.Now().Before(*row.ExpiresAt) {
		return auth.Principal{}, apierr.Unauthorized()
	}
	return principalOf(row), nil
}

func principalOf(row store.Token) auth.Principal {
	return auth.Principal{TokenID: row.ID, ClientID: row.ClientID,
		Tenant: store.Tenant{PlatformID: row.PlatformID, Env: row.Env}, Permissions: row.Permissions}
}
