package wallets

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Associated data of sealed secrets: the purpose and the owning row's id, so
// a sealed value moved to another row or used for another purpose does not
// open.
func walletKeyAD(accountID string) []byte { return []byte("wallet-signing-key|" + accountID) }

// NewKey returns a fresh P-256 signing key.
func NewKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

// CompressedHex is the compressed SEC1 encoding of a P-256 public key, in
// lowercase hex (66 characters, 02 or 03 first).
func CompressedHex(pub *ecdsa.PublicKey) string {
	b, err := pub.Bytes() // uncompressed 04||X||Y
	if err != nil {
		panic("wallets: public key: " + err.Error())
	}
	out := make([]byte, 33)
	out[0] = 2 | b[64]&1
	copy(out[1:], b[1:33])
	return hex.EncodeToString(out)
}

// ParsePublicKey parses a P-256 public key given as SEC1 hex, compressed (66
// hex characters) or uncompressed (130), and reports which it was.
func ParsePublicKey(s string) (pub *ecdsa.PublicKey, compressed bool, err error) {
	if len(s) != 66 && len(s) != 130 {
		return nil, false, errors.New("not 66 or 130 hex characters")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, false, errors.New("not hex")
	}
	switch {
	case len(b) == 33 && (b[0] == 2 || b[0] == 3):
		x, y := elliptic.UnmarshalCompressed(elliptic.P256(), b)
		if x == nil {
			return nil, false, errors.New("not a point of P-256")
		}
		b = elliptic.Marshal(elliptic.P256(), x, y) //nolint:staticcheck // only to re-encode a checked point
		compressed = true
	case len(b) == 65 && b[0] == 4:
	default:
		return nil, false, errors.New("bad SEC1 prefix")
	}
	pub, err = ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
	if err != nil {
		return nil, false, errors.New("not a point of P-256")
	}
	return pub, compressed, nil
}

// ecdhKey converts an ECDSA P-256 public key for HPKE.
func ecdhKey(pub *ecdsa.PublicKey) (*ecdh.PublicKey, error) {
	b, err := pub.Bytes()
	if err != nil {
		return nil, err
	}
	return ecdh.P256().NewPublicKey(b)
}

// scalar is the fixed 32-byte big-endian private scalar.
func scalar(k *ecdsa.PrivateKey) []byte {
	b, err := k.Bytes()
	if err != nil {
		panic("wallets: private key: " + err.Error())
	}
	return b
}

func keyFromScalar(b []byte) (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// sealKey seals a private key for storage under ad.
func (s *Service) sealKey(k *ecdsa.PrivateKey, ad []byte) (string, error) {
	sealed, err := s.Sealer.Seal(scalar(k), ad)
	if err != nil {
		return "", fmt.Errorf("wallets: seal key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sealed), nil
}

// openKey opens a stored sealed private key.
func (s *Service) openKey(stored string, ad []byte) (*ecdsa.PrivateKey, error) {
	sealed, err := base64.StdEncoding.DecodeString(stored)
	if err != nil {
		return nil, fmt.Errorf("wallets: stored key: %w", err)
	}
	b, err := s.Sealer.Open(sealed, ad)
	if err != nil {
		return nil, fmt.Errorf("wallets: open key: %w", err)
	}
	return keyFromScalar(b)
}

// NewWalletTx gives a newly provisioned wallet its signing key, inside the
// transaction that creates the account (the accounts service's hook).
func (s *Service) NewWalletTx(ctx context.Context, tx *store.Tx, account store.InternalAccount) error {
	k, err := NewKey()
	if err != nil {
		return err
	}
	sealed, err := s.sealKey(k, walletKeyAD(account.ID))
	if err != nil {
		return err
	}
	return tx.InsertWalletKey(ctx, store.WalletKey{AccountID: account.ID, Tenant: account.Tenant,
		PublicKey: CompressedHex(&k.PublicKey), SealedPrivateKey: sealed, CreatedAt: account.CreatedAt})
}

// walletPrivateKey opens a wallet's signing key (export only).
func (s *Service) walletPrivateKey(ctx context.Context, q store.Q, t store.Tenant, accountID string) (*ecdsa.PrivateKey, error) {
	row, err := q.GetWalletKey(ctx, t, accountID)
	if err != nil {
		return nil, err
	}
	return s.openKey(row.SealedPrivateKey, walletKeyAD(accountID))
}

func hexString(b []byte) string { return hex.EncodeToString(b) }
