package uma

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Service is the UMA capability.
type Service struct {
	DB     *store.DB
	Ledger *ledger.Service
	Sealer Sealer
	// Config returns a tenant's platform configuration (its umaDomain).
	Config func(ctx context.Context, t store.Tenant) (platformconfig.Config, error)
	// Client returns the HTTP client for calls to counterparty institutions
	// from t's environment, refusing the addresses the operator does not
	// allow (the webhook address guard), and checks a URL before the call.
	Client func(ctx context.Context, env string) (*http.Client, error)
	// CheckURL refuses a counterparty URL t's environment may not call.
	CheckURL func(ctx context.Context, env, raw string) error
	// Rate is the mid rate between two currencies in env: units of from per
	// one unit of to (major units; rates.Quote.Mid).
	Rate func(ctx context.Context, env, from, to string) (decimal.Decimal, error)

	sandbox sandboxVASP
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Second) }

// Domain is the tenant's configured UMA domain, or "".
func (s *Service) Domain(ctx context.Context, t store.Tenant) (string, error) {
	cfg, err := s.Config(ctx, t)
	if err != nil {
		return "", err
	}
	if cfg.UmaDomain == nil {
		return "", nil
	}
	return strings.ToLower(*cfg.UmaDomain), nil
}

// AssignAddress reserves a new customer's UMA address inside the
// transaction that creates (or updates) it: the requested one, which must be
// under the platform's UMA domain (400 INVALID_UMA_ADDRESS) and free on it
// (409 UMA_ADDRESS_EXISTS), or, when none is requested and the platform has
// a domain, one made from the customer's id. It returns the address, or ""
// when the platform has no UMA domain and none was requested.
func (s *Service) AssignAddress(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, requested *string) (string, error) {
	domain, err := s.Domain(ctx, t)
	if err != nil {
		return "", err
	}
	var a Address
	switch {
	case requested != nil:
		if a, err = ParseAddress(*requested); err != nil {
			return "", err
		}
		if domain == "" {
			return "", apierr.New("INVALID_UMA_ADDRESS", "The platform has no umaDomain configured (PATCH /config): customers cannot hold UMA addresses yet")
		}
		if a.Domain != domain {
			return "", apierr.Newf("INVALID_UMA_ADDRESS", "%s is not under the platform's UMA domain %s", a, domain)
		}
	case domain == "":
		return "", nil
	default:
		a = Address{Local: strings.ToLower(strings.TrimPrefix(customerID, id.Customer+":")), Domain: domain}
	}
	err = tx.InsertUmaAddress(ctx, store.UmaAddress{Domain: a.Domain, LocalPart: a.Local, Tenant: t, CustomerID: customerID, CreatedAt: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return "", apierr.Newf("UMA_ADDRESS_EXISTS", "The UMA address %s is already taken on %s", a, a.Domain)
	}
	return a.String(), err
}

// ReleaseAddresses frees a customer's addresses (on a change of address).
func (s *Service) ReleaseAddresses(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string) error {
	return tx.DeleteUmaAddressesOf(ctx, t, customerID)
}

// TenantForHost resolves the Host of a public UMA request to the one tenant
// whose configured umaDomain it is, or ErrNotFound.
func (s *Service) TenantForHost(ctx context.Context, host string) (store.Tenant, error) {
	host = strings.ToLower(host)
	ts, docs, err := s.DB.Read().TenantsWithUmaDomain(ctx, host)
	if err != nil {
		return store.Tenant{}, err
	}
	for i, t := range ts {
		var doc struct {
			UmaDomain *string `json:"umaDomain"`
		}
		if json.Unmarshal(docs[i], &doc) == nil && doc.UmaDomain != nil && strings.ToLower(*doc.UmaDomain) == host {
			return t, nil
		}
	}
	return store.Tenant{}, store.ErrNotFound
}
