package accounts

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// WalletCurrency is the currency of embedded wallets. A customer has one
// wallet: its credentials (one EMAIL_OTP and one SMS_OTP per wallet, an
// email or phone number on one wallet only) identify the customer, which
// several wallets per customer would contradict.
const WalletCurrency = "USDB"

// walletsEnabled reports whether the tenant's configuration enables
// embedded wallets and this service can give them keys.
func (s *Service) walletsEnabled(ctx context.Context, q store.Q, t store.Tenant) (bool, error) {
	if s.NewWalletTx == nil {
		return false, nil
	}
	cfg, err := platformconfig.EmbeddedWallets(ctx, q, t)
	return cfg != nil, err
}

// provisionWalletTx creates a customer's embedded wallet, with its signing
// key, when the platform enables them and the wallet does not exist yet.
func (s *Service) provisionWalletTx(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string) error {
	ok, err := s.walletsEnabled(ctx, tx.Q, t)
	if err != nil || !ok {
		return err
	}
	row, err := newRow(t, customerID, TypeEmbeddedWallet, WalletCurrency, "", tx.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return err
	}
	created, err := s.createTx(ctx, tx, row)
	if err != nil || !created {
		return err
	}
	return s.NewWalletTx(ctx, tx, row)
}

// ensureWallets provisions the wallets that are missing (customers created
// before embedded wallets were enabled), like Ensure.
func (s *Service) ensureWallets(ctx context.Context, t store.Tenant, customerID string) error {
	ok, err := s.walletsEnabled(ctx, s.DB.Read(), t)
	if err != nil || !ok {
		return err
	}
	for {
		missing, err := s.DB.Read().CustomersWithoutWallet(ctx, t, customerID, WalletCurrency, ensureBatch)
		if err != nil || len(missing) == 0 {
			return err
		}
		err = s.DB.InTx(ctx, func(tx *store.Tx) error {
			for _, c := range missing {
				if err := s.provisionWalletTx(ctx, tx, t, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || len(missing) < ensureBatch {
			return err
		}
	}
}
