package uma

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Sealer encrypts private keys at rest, bound to associated data (the
// server passes the same sealer that seals embedded-wallet keys: a data key
// kept sealed under the operator's keyring).
type Sealer interface {
	Seal(plaintext, ad []byte) ([]byte, error)
	Open(sealed, ad []byte) ([]byte, error)
}

// Keys is a tenant's opened key set.
type Keys struct {
	Signing             *secp256k1.PrivateKey
	Encryption          *secp256k1.PrivateKey
	SigningCertChain    string
	EncryptionCertChain string
}

func keyAD(t store.Tenant, purpose string) []byte {
	return []byte("uma-key|" + t.PlatformID + "|" + t.Env + "|" + purpose)
}

// Keys returns the tenant's UMA keys, generating them on first use (one
// set per platform and environment; a concurrent first use keeps the set
// that was stored first).
func (s *Service) Keys(ctx context.Context, t store.Tenant) (Keys, error) {
	row, err := s.DB.Read().GetUmaKeys(ctx, t)
	if errors.Is(err, store.ErrNotFound) {
		if row, err = s.generateKeys(ctx, t); errors.Is(err, store.ErrConflict) {
			row, err = s.DB.Read().GetUmaKeys(ctx, t)
		}
	}
	if err != nil {
		return Keys{}, err
	}
	return s.openKeys(t, row)
}

func (s *Service) generateKeys(ctx context.Context, t store.Tenant) (store.UmaKeys, error) {
	now := s.now()
	caKey, ca, err := newCA(t.PlatformID+" "+t.Env, now)
	if err != nil {
		return store.UmaKeys{}, err
	}
	row := store.UmaKeys{Tenant: t, CreatedAt: now}
	for _, k := range []struct {
		purpose string
		chain   *string
		sealed  *string
	}{{"signing", &row.SigningCertChain, &row.SealedSigningKey}, {"encryption", &row.EncryptionCertChain, &row.SealedEncryptionKey}} {
		priv, err := secp256k1.GeneratePrivateKey()
		if err != nil {
			return store.UmaKeys{}, err
		}
		if *k.chain, err = issueLeaf(caKey, ca, priv.PubKey(), t.PlatformID+" UMA "+k.purpose, now.Add(-time.Minute), now.Add(certLifetime)); err != nil {
			return store.UmaKeys{}, err
		}
		sealed, err := s.Sealer.Seal(priv.Serialize(), keyAD(t, k.purpose))
		if err != nil {
			return store.UmaKeys{}, fmt.Errorf("uma: seal key: %w", err)
		}
		*k.sealed = base64.StdEncoding.EncodeToString(sealed)
	}
	return row, s.DB.Write().InsertUmaKeys(ctx, row)
}

func (s *Service) openKeys(t store.Tenant, row store.UmaKeys) (Keys, error) {
	open := func(stored, purpose string) (*secp256k1.PrivateKey, error) {
		sealed, err := base64.StdEncoding.DecodeString(stored)
		if err != nil {
			return nil, fmt.Errorf("uma: stored key: %w", err)
		}
		b, err := s.Sealer.Open(sealed, keyAD(t, purpose))
		if err != nil {
			return nil, fmt.Errorf("uma: open key: %w", err)
		}
		return secp256k1.PrivKeyFromBytes(b), nil
	}
	sign, err := open(row.SealedSigningKey, "signing")
	if err != nil {
		return Keys{}, err
	}
	enc, err := open(row.SealedEncryptionKey, "encryption")
	if err != nil {
		return Keys{}, err
	}
	return Keys{Signing: sign, Encryption: enc, SigningCertChain: row.SigningCertChain, EncryptionCertChain: row.EncryptionCertChain}, nil
}

// PubKeyResponse is what /.well-known/lnurlpubkey serves for the tenant:
// both certificate chains and the public keys, built by the SDK.
func (s *Service) PubKeyResponse(ctx context.Context, t store.Tenant) (*protocol.PubKeyResponse, error) {
	k, err := s.Keys(ctx, t)
	if err != nil {
		return nil, err
	}
	row, err := s.DB.Read().GetUmaKeys(ctx, t)
	if err != nil {
		return nil, err
	}
	exp := row.CreatedAt.Add(certLifetime).Unix()
	return umasdk.GetPubKeyResponse(k.SigningCertChain, k.EncryptionCertChain, &exp)
}
