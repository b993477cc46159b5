package stablecoins

import (
	"context"
	"errors"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// RegisterRequest is the body of POST /stablecoins.
type RegisterRequest struct {
	ProviderTokenIdentifier     *string `json:"providerTokenIdentifier"`
	NetworkTokenIdentifier      *string `json:"networkTokenIdentifier"`
	Network                     *string `json:"network"`
	StablecoinProviderAccountID *string `json:"stablecoinProviderAccountId"`
}

// Validate checks the request's fields.
func (r RegisterRequest) Validate() error {
	var f apierr.Fields
	textField(&f, "providerTokenIdentifier", r.ProviderTokenIdentifier, true, 64)
	textField(&f, "networkTokenIdentifier", r.NetworkTokenIdentifier, true, 255)
	if r.NetworkTokenIdentifier != nil && strings.ContainsAny(*r.NetworkTokenIdentifier, " \t\r\n") {
		f.Add("networkTokenIdentifier", apierr.Pattern, "must not contain whitespace")
	}
	switch {
	case r.Network == nil:
		f.Add("network", apierr.Required, "is required")
	case *r.Network != NetworkSpark:
		f.Add("network", apierr.Enum, "must be SPARK")
	}
	textField(&f, "stablecoinProviderAccountId", r.StablecoinProviderAccountID, false, 255)
	return f.Err()
}

func coinView(c store.Stablecoin) Stablecoin {
	out := Stablecoin{ID: c.ID, Name: c.Name, Symbol: c.Symbol, BaseCurrency: c.BaseCurrency, Network: c.Network,
		Decimals: c.Decimals, IssuanceStatus: c.IssuanceStatus, GridOperationsStatus: c.GridOperationsStatus,
		NetworkTokenIdentifier: c.NetworkTokenIdentifier, Provider: c.Provider, StablecoinProviderAccountID: c.ProviderAccountID,
		ProviderEnvironment: c.ProviderEnvironment, ProviderTokenIdentifier: c.ProviderTokenIdentifier,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.GridOperationsStatus == GridEnabled {
		out.Currency = c.Symbol
	}
	return out
}

func coinNotFound(coinID string) error {
	return apierr.NotFound("STABLECOIN_NOT_FOUND", "Stablecoin "+coinID)
}

// taken refuses a symbol or token identifier the tenant already has
// (R-STBL-08).
func taken(symbolTaken, tokenTaken bool, symbol, tokenID string) error {
	switch {
	case symbolTaken:
		return apierr.New("STABLECOIN_SYMBOL_ALREADY_EXISTS", "A stablecoin with symbol "+symbol+" is already registered")
	case tokenTaken:
		return apierr.New("STABLECOIN_TOKEN_IDENTIFIER_ALREADY_EXISTS",
			"A stablecoin with network token identifier "+tokenID+" is already registered")
	}
	return nil
}

// Register registers a provider-created stablecoin: the provider describes
// the token (name, symbol, decimals, issuance status).
func (s *Service) Register(ctx context.Context, t store.Tenant, req RegisterRequest) (Stablecoin, error) {
	if err := req.Validate(); err != nil {
		return Stablecoin{}, err
	}
	link, err := s.resolveAccount(ctx, s.DB.Read(), t, deref(req.StablecoinProviderAccountID))
	if err != nil {
		return Stablecoin{}, err
	}
	creds, err := s.credentials(link)
	if err != nil {
		return Stablecoin{}, err
	}
	tok, err := s.Provider(t.Env).Token(ctx, creds, *req.ProviderTokenIdentifier, *req.Network, *req.NetworkTokenIdentifier)
	if err != nil {
		return Stablecoin{}, err
	}
	if _, ok := currency.Lookup(tok.BaseCurrency); !ok || tok.Decimals < 0 || tok.Decimals > 18 {
		return Stablecoin{}, apierr.New("STABLECOIN_PROVIDER_ERROR", "The provider described the token with an unknown base currency or decimals")
	}
	now := s.now()
	row := store.Stablecoin{ID: id.New(id.Stablecoin), Tenant: t, ProviderAccountID: link.ID, Provider: link.Provider,
		ProviderEnvironment: link.ProviderEnvironment, ProviderTokenIdentifier: *req.ProviderTokenIdentifier,
		Network: *req.Network, NetworkTokenIdentifier: *req.NetworkTokenIdentifier, Name: tok.Name, Symbol: tok.Symbol,
		BaseCurrency: tok.BaseCurrency, Decimals: tok.Decimals, IssuanceStatus: tok.IssuanceStatus,
		GridOperationsStatus: GridNotEnabled, CreatedAt: now, UpdatedAt: now}
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		sym, tokTaken, err := tx.StablecoinTaken(ctx, t, row.Symbol, row.Network, row.NetworkTokenIdentifier)
		if err != nil {
			return err
		}
		if err := taken(sym, tokTaken, row.Symbol, row.NetworkTokenIdentifier); err != nil {
			return err
		}
		return tx.InsertStablecoin(ctx, row)
	})
	if errors.Is(err, store.ErrConflict) {
		// A concurrent registration took it between the check and the insert.
		sym, tokTaken, cerr := s.DB.Read().StablecoinTaken(ctx, t, row.Symbol, row.Network, row.NetworkTokenIdentifier)
		if cerr == nil {
			if terr := taken(sym, tokTaken, row.Symbol, row.NetworkTokenIdentifier); terr != nil {
				return Stablecoin{}, terr
			}
		}
	}
	if err != nil {
		return Stablecoin{}, err
	}
	return coinView(row), nil
}

// Get returns a stablecoin.
func (s *Service) Get(ctx context.Context, t store.Tenant, coinID string) (Stablecoin, error) {
	c, err := s.DB.Read().GetStablecoin(ctx, t, coinID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Stablecoin{}, coinNotFound(coinID)
	}
	return coinView(c), err
}

// List returns a page of stablecoins.
func (s *Service) List(ctx context.Context, t store.Tenant, f store.StablecoinFilter, after string, limit int) ([]Stablecoin, int, error) {
	rows, total, err := s.DB.Read().ListStablecoins(ctx, t, f, after, limit)
	out := make([]Stablecoin, 0, len(rows))
	for _, r := range rows {
		out = append(out, coinView(r))
	}
	return out, total, err
}

// RequestEnablement asks for the stablecoin to be enabled for the
// service's normal operations (internal accounts, quotes): NOT_ENABLED or
// DISABLED becomes PENDING_APPROVAL, where it waits for the operator's
// approval. Only a PROVISIONED token may ask (STABLECOIN_NOT_PROVISIONED),
// and only once at a time (STABLECOIN_GRID_ENABLEMENT_NOT_REQUESTABLE).
func (s *Service) RequestEnablement(ctx context.Context, t store.Tenant, coinID string) (Stablecoin, error) {
	var out store.Stablecoin
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.GetStablecoin(ctx, t, coinID, true)
		if errors.Is(err, store.ErrNotFound) {
			return coinNotFound(coinID)
		}
		if err != nil {
			return err
		}
		if c.IssuanceStatus != IssuanceProvisioned {
			return apierr.New("STABLECOIN_NOT_PROVISIONED", "Stablecoin "+c.ID+" is "+c.IssuanceStatus+" at the provider, not PROVISIONED")
		}
		if c.GridOperationsStatus != GridNotEnabled && c.GridOperationsStatus != GridDisabled {
			return apierr.New("STABLECOIN_GRID_ENABLEMENT_NOT_REQUESTABLE",
				"Enablement of stablecoin "+c.ID+" cannot be requested while it is "+c.GridOperationsStatus)
		}
		c.GridOperationsStatus, c.UpdatedAt = GridPendingApproval, s.now()
		out = c
		return tx.SetStablecoinGridStatus(ctx, t, c.ID, c.GridOperationsStatus, c.UpdatedAt)
	})
	return coinView(out), err
}
