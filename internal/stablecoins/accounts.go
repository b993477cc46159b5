package stablecoins

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// LinkRequest is the body of POST /stablecoin-provider-accounts.
type LinkRequest struct {
	Provider          *string `json:"provider"`
	APIClientID       *string `json:"apiClientId"`
	APIClientSecret   *string `json:"apiClientSecret"`
	ProviderAccountID *string `json:"providerAccountId"`
}

// Validate checks the request's fields.
func (r LinkRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Provider == nil:
		f.Add("provider", apierr.Required, "is required")
	case *r.Provider != ProviderBrale:
		f.Add("provider", apierr.Enum, "must be BRALE")
	}
	textField(&f, "apiClientId", r.APIClientID, true, 255)
	textField(&f, "apiClientSecret", r.APIClientSecret, true, 1024)
	textField(&f, "providerAccountId", r.ProviderAccountID, false, 255)
	return f.Err()
}

func textField(f *apierr.Fields, name string, v *string, required bool, max int) {
	switch {
	case v == nil:
		if required {
			f.Add(name, apierr.Required, "is required")
		}
	case strings.TrimSpace(*v) == "":
		f.Add(name, apierr.Required, "must not be blank")
	case len(*v) > max:
		f.Add(name, apierr.Maximum, "must be at most %d characters", max)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Link verifies credentials with the provider and stores the link, the
// secret sealed (R-STBL-01). A link the provider will not let issue is
// stored INVALID.
func (s *Service) Link(ctx context.Context, t store.Tenant, req LinkRequest) (ProviderAccount, error) {
	if err := req.Validate(); err != nil {
		return ProviderAccount{}, err
	}
	p := s.Provider(t.Env)
	v, err := p.Verify(ctx, Credentials{ClientID: *req.APIClientID, Secret: *req.APIClientSecret,
		AccountID: deref(req.ProviderAccountID)})
	if err != nil {
		return ProviderAccount{}, err
	}
	now := s.now()
	row := store.StablecoinProviderAccount{ID: id.New(id.StablecoinProviderAccount), Tenant: t, Provider: *req.Provider,
		ProviderAccountID: v.AccountID, ProviderEnvironment: p.Environment(), APIClientID: *req.APIClientID,
		Status: AccountActive, LastVerifiedAt: &now, CreatedAt: now, UpdatedAt: now}
	if !v.Usable {
		row.Status = AccountInvalid
	}
	sealed, err := s.Sealer.Seal([]byte(*req.APIClientSecret), secretAD(row.ID))
	if err != nil {
		return ProviderAccount{}, err
	}
	row.SealedSecret = base64.StdEncoding.EncodeToString(sealed)
	if err := s.DB.Write().InsertStablecoinProviderAccount(ctx, row); err != nil {
		return ProviderAccount{}, err
	}
	return accountView(row), nil
}

// GetAccount returns a link.
func (s *Service) GetAccount(ctx context.Context, t store.Tenant, linkID string) (ProviderAccount, error) {
	a, err := s.DB.Read().GetStablecoinProviderAccount(ctx, t, linkID, false)
	if errors.Is(err, store.ErrNotFound) {
		return ProviderAccount{}, accountNotFound(linkID)
	}
	return accountView(a), err
}

// ListAccounts returns a page of links (filters may be empty).
func (s *Service) ListAccounts(ctx context.Context, t store.Tenant, provider, status, after string, limit int) ([]ProviderAccount, int, error) {
	rows, total, err := s.DB.Read().ListStablecoinProviderAccounts(ctx, t, provider, status, after, limit)
	out := make([]ProviderAccount, 0, len(rows))
	for _, r := range rows {
		out = append(out, accountView(r))
	}
	return out, total, err
}

// Revoke marks a link REVOKED: it serves no new stablecoin or operation
// (STABLECOIN_PROVIDER_ACCOUNT_REVOKED). Revoking twice is harmless.
func (s *Service) Revoke(ctx context.Context, t store.Tenant, linkID string) (ProviderAccount, error) {
	var out store.StablecoinProviderAccount
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetStablecoinProviderAccount(ctx, t, linkID, true)
		if errors.Is(err, store.ErrNotFound) {
			return accountNotFound(linkID)
		}
		if err != nil {
			return err
		}
		if a.Status != AccountRevoked {
			a.Status, a.UpdatedAt = AccountRevoked, tx.Now().UTC().Truncate(time.Microsecond)
			if err := tx.SetStablecoinProviderAccountStatus(ctx, t, a.ID, a.Status, a.UpdatedAt); err != nil {
				return err
			}
		}
		out = a
		return nil
	})
	return accountView(out), err
}
