package stablecoins

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Sealer encrypts the provider API secrets at rest, bound to associated
// data (the link id). The server wires a wallets.NewLocalSealer keyed by a
// data key in server_secrets, which the store seals under the operator's
// key ring (internal/keyring), as it does for wallet keys.
type Sealer interface {
	Seal(plaintext, ad []byte) ([]byte, error)
	Open(sealed, ad []byte) ([]byte, error)
}

// Service is stablecoin issuance over the store and the ledger.
type Service struct {
	DB     *store.DB
	Ledger *ledger.Service
	Sealer Sealer
	// Provider returns the provider adapter of a tenant environment
	// ("sandbox", "production"): DefaultProvider unless replaced.
	Provider func(env string) Provider
}

// New returns the service with the default providers.
func New(db *store.DB, l *ledger.Service, sealer Sealer) *Service {
	return &Service{DB: db, Ledger: l, Sealer: sealer, Provider: DefaultProvider}
}

// DefaultProvider is the simulated provider for sandbox tenants and the
// production adapter (which refuses while unconfigured) for the others.
func DefaultProvider(env string) Provider {
	if env == "sandbox" {
		return Sandbox{}
	}
	return Production{}
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }

// secretAD binds a sealed secret to its link.
func secretAD(linkID string) []byte { return []byte(linkID + "|api-client-secret") }

// credentials unseals a link's credentials to call its provider.
func (s *Service) credentials(a store.StablecoinProviderAccount) (Credentials, error) {
	sealed, err := base64.StdEncoding.DecodeString(a.SealedSecret)
	if err != nil {
		return Credentials{}, fmt.Errorf("stablecoins: sealed secret of %s: %w", a.ID, err)
	}
	secret, err := s.Sealer.Open(sealed, secretAD(a.ID))
	if err != nil {
		return Credentials{}, fmt.Errorf("stablecoins: open the secret of %s: %w", a.ID, err)
	}
	return Credentials{ClientID: a.APIClientID, Secret: string(secret), AccountID: a.ProviderAccountID}, nil
}

func accountView(a store.StablecoinProviderAccount) ProviderAccount {
	return ProviderAccount{ID: a.ID, Provider: a.Provider, ProviderAccountID: a.ProviderAccountID,
		ProviderEnvironment: a.ProviderEnvironment, Status: a.Status, LastVerifiedAt: a.LastVerifiedAt,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func accountNotFound(id string) error {
	return apierr.NotFound("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND", "Stablecoin provider account "+id)
}

// usable refuses a link that is not ACTIVE (R-STBL-01).
func usable(a store.StablecoinProviderAccount) error {
	switch a.Status {
	case AccountRevoked:
		return apierr.New("STABLECOIN_PROVIDER_ACCOUNT_REVOKED", "Stablecoin provider account "+a.ID+" has been revoked")
	case AccountInvalid:
		return apierr.New("STABLECOIN_PROVIDER_ACCOUNT_INVALID",
			"Stablecoin provider account "+a.ID+" is not usable: the provider does not allow it to issue")
	}
	return nil
}

// resolveAccount picks the provider account link a request uses: the one
// named, or the tenant's only ACTIVE one (R-STBL-02: several need naming).
func (s *Service) resolveAccount(ctx context.Context, q store.Q, t store.Tenant, named string) (store.StablecoinProviderAccount, error) {
	if named != "" {
		a, err := q.GetStablecoinProviderAccount(ctx, t, named, false)
		if errors.Is(err, store.ErrNotFound) {
			return a, accountNotFound(named)
		}
		if err != nil {
			return a, err
		}
		return a, usable(a)
	}
	all, _, err := q.ListStablecoinProviderAccounts(ctx, t, "", "", "", 1000)
	if err != nil {
		return store.StablecoinProviderAccount{}, err
	}
	var active []store.StablecoinProviderAccount
	for _, a := range all {
		if a.Status == AccountActive {
			active = append(active, a)
		}
	}
	switch {
	case len(active) == 1:
		return active[0], nil
	case len(active) > 1:
		return store.StablecoinProviderAccount{}, apierr.New("STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED",
			fmt.Sprintf("%d active provider account links could serve this request; pass stablecoinProviderAccountId to select one", len(active)))
	case len(all) > 0:
		return all[len(all)-1], usable(all[len(all)-1])
	}
	return store.StablecoinProviderAccount{}, apierr.NotFound("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND",
		"An active stablecoin provider account link (link one with POST /stablecoin-provider-accounts)")
}
