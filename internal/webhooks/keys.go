package webhooks

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// Keys: one P-256 service key per installation (X-Service-Signature), and
// per tenant one or more Standard Webhooks secrets (webhook-signature).

// serviceKeyName names the installation's key in webhook_signing_keys.
const serviceKeyName = "service"

// secretIDPrefix is the id type of a stored webhook secret.
const secretIDPrefix = "WebhookSecret"

// serviceKey loads the installation's signing key once and keeps it. Every
// node reads the same row, so all sign with the same key.
type serviceKey struct {
	db  *store.DB
	mu  sync.Mutex
	key *ecdsa.PrivateKey
}

func (k *serviceKey) get(ctx context.Context) (*ecdsa.PrivateKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != nil {
		return k.key, nil
	}
	pem, err := k.db.WebhookSigningKey(ctx, serviceKeyName, func() ([]byte, error) {
		priv, err := signing.GenerateKey()
		if err != nil {
			return nil, err
		}
		return signing.EncodePrivateKeyPEM(priv)
	})
	if err != nil {
		return nil, fmt.Errorf("webhooks: service key: %w", err)
	}
	priv, err := signing.ParsePrivateKeyPEM(pem)
	if err != nil {
		return nil, fmt.Errorf("webhooks: stored service key: %w", err)
	}
	k.key = priv
	return priv, nil
}

// publicPEM returns the public half as a PEM "PUBLIC KEY" block.
func (k *serviceKey) publicPEM(ctx context.Context) ([]byte, error) {
	priv, err := k.get(ctx)
	if err != nil {
		return nil, err
	}
	return signing.EncodePublicKeyPEM(&priv.PublicKey)
}

// activeSecrets returns the tenant's secrets that sign now, newest first,
// creating the first secret if the tenant has none yet.
func activeSecrets(ctx context.Context, db *store.DB, t store.Tenant) ([]store.WebhookSecret, error) {
	for range 3 {
		list, err := db.WebhookSecrets(ctx, t, db.Now())
		if err != nil || len(list) > 0 {
			return list, err
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return insertCurrentSecret(ctx, tx, t) })
		if err != nil && !errors.Is(err, store.ErrConflict) { // conflict: another node made it first
			return nil, err
		}
	}
	return nil, errors.New("webhooks: could not create a webhook secret")
}

func insertCurrentSecret(ctx context.Context, tx *store.Tx, t store.Tenant) error {
	return tx.InsertWebhookSecret(ctx, store.WebhookSecret{ID: id.New(secretIDPrefix), Tenant: t,
		Secret: signing.GenerateSecret().Encode(), CreatedAt: tx.Now().UTC().Truncate(time.Microsecond)})
}

// rotateSecret makes a new current secret; the old one keeps signing for
// overlap (zero: it stops now).
func rotateSecret(ctx context.Context, db *store.DB, t store.Tenant, overlap time.Duration) error {
	if _, err := activeSecrets(ctx, db, t); err != nil { // so there is something to rotate
		return err
	}
	var err error
	for range 3 {
		err = db.InTx(ctx, func(tx *store.Tx) error {
			err := tx.ExpireCurrentWebhookSecret(ctx, t, tx.Now().Add(overlap))
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return insertCurrentSecret(ctx, tx, t)
		})
		// A conflict means a concurrent rotation committed a new current
		// secret between our UPDATE and INSERT; rotate that one in turn.
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return err
}

// parseSecrets turns stored secrets into signing keys.
func parseSecrets(list []store.WebhookSecret) ([]signing.Secret, error) {
	out := make([]signing.Secret, 0, len(list))
	for _, s := range list {
		sec, err := signing.ParseSecret(s.Secret)
		if err != nil {
			return nil, fmt.Errorf("webhooks: stored secret %s: %w", s.ID, err)
		}
		out = append(out, sec)
	}
	return out, nil
}
