package stablecoins

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// externalAccount loads a live external account of the tenant
// (STABLECOIN_EXTERNAL_ACCOUNT_NOT_FOUND otherwise, R-STBL-06).
func (s *Service) externalAccount(ctx context.Context, t store.Tenant, accountID string) (store.ExternalAccount, error) {
	ea, err := s.DB.Read().GetExternalAccount(ctx, t, accountID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ea.DeletedAt != nil) {
		return ea, apierr.NotFound("STABLECOIN_EXTERNAL_ACCOUNT_NOT_FOUND", "External account "+accountID)
	}
	return ea, err
}

// accountInfo is what the provider needs of an external account.
type accountInfo struct {
	Address       string `json:"address"`
	AccountNumber string `json:"accountNumber"`
}

// walletOn accepts a wallet on network (SPARK_WALLET for SPARK).
func walletOn(network string) func(store.ExternalAccount) bool {
	return func(ea store.ExternalAccount) bool { return ea.AccountType == network+"_WALLET" }
}

// bankIn accepts a US bank account in cur.
func bankIn(cur string) func(store.ExternalAccount) bool {
	return func(ea store.ExternalAccount) bool { return ea.AccountType == "USD_ACCOUNT" && ea.Currency == cur }
}

// linked returns the provider address id of an external account for this
// provider account, asking the provider to register it when it is not yet
// linked (the new link is returned to be stored with the operation).
func (s *Service) linked(ctx context.Context, t store.Tenant, link store.StablecoinProviderAccount, creds Credentials,
	accountID string, fits func(store.ExternalAccount) bool) (string, []store.StablecoinLink, error) {
	ea, err := s.externalAccount(ctx, t, accountID)
	if err != nil {
		return "", nil, err
	}
	if !fits(ea) {
		return "", nil, apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_NOT_SUPPORTED",
			"External account "+ea.ID+" ("+ea.AccountType+", "+ea.Currency+") cannot be used here with the provider")
	}
	links, err := s.DB.Read().StablecoinLinksOf(ctx, t, ea.ID)
	if err != nil {
		return "", nil, err
	}
	for _, l := range links {
		if l.ProviderAccountID == link.ID {
			return l.ProviderAddressID, nil, nil
		}
	}
	if ea.Status != "ACTIVE" {
		return "", nil, apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_LINK_FAILED",
			"External account "+ea.ID+" is "+ea.Status+"; only an ACTIVE external account can be linked with the provider")
	}
	var info accountInfo
	if err := json.Unmarshal(ea.Info, &info); err != nil {
		return "", nil, err
	}
	addr := Address{ExternalAccountID: ea.ID, Bank: ea.AccountType == "USD_ACCOUNT", Network: link.Provider,
		Value: info.Address}
	if addr.Bank {
		addr.Network, addr.Value = "", info.AccountNumber
	}
	addrID, err := s.Provider(t.Env).LinkAddress(ctx, creds, addr)
	if err != nil {
		return "", nil, err
	}
	return addrID, []store.StablecoinLink{{ProviderAccountID: link.ID, ExternalAccountID: ea.ID, Tenant: t,
		ProviderAddressID: addrID, CreatedAt: s.now()}}, nil
}
