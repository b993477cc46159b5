package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/keyring"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func ring(t *testing.T, keys ...keyring.Key) *keyring.Keyring {
	t.Helper()
	r, err := keyring.New(keys[0], keys[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newKey(t *testing.T, id string) keyring.Key {
	t.Helper()
	k, err := keyring.Generate(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// storedSecrets writes one secret of each kind and returns their clear
// values, keyed by where they are stored.
func storedSecrets(t *testing.T, db *store.DB) (tn store.Tenant, secretID string, want map[string]string) {
	t.Helper()
	p := mustPlatform(t, db, false)
	tn = store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	secretID = id.New("WebhookSecret")
	ws := store.WebhookSecret{ID: secretID, Tenant: tn, Secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0",
		CreatedAt: db.Now().UTC().Truncate(time.Microsecond)}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertWebhookSecret(ctx, ws) }); err != nil {
		t.Fatal(err)
	}
	hmacKey, err := db.ServerSecret(ctx, "cursor-hmac")
	if err != nil {
		t.Fatal(err)
	}
	pem, err := db.WebhookSigningKey(ctx, "service", func() ([]byte, error) { return []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n"), nil })
	if err != nil {
		t.Fatal(err)
	}
	return tn, secretID, map[string]string{"webhook_secrets": ws.Secret, "server_secrets": string(hmacKey), "webhook_signing_keys": string(pem)}
}

// raw returns what the database holds for each kind.
func raw(t *testing.T, db *store.DB, secretID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for table, q := range map[string]string{
		"webhook_secrets":      `SELECT secret FROM webhook_secrets WHERE id = '` + secretID + `'`,
		"server_secrets":       `SELECT value FROM server_secrets WHERE name = 'cursor-hmac'`,
		"webhook_signing_keys": `SELECT private_pem FROM webhook_signing_keys WHERE name = 'service'`,
	} {
		v, err := db.QueryString(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out[table] = v
	}
	return out
}

// readBack reads every secret through the store's API.
func readBack(db *store.DB, tn store.Tenant) (map[string]string, error) {
	list, err := db.Read().ActiveWebhookSecrets(ctx, tn, time.Unix(0, 0))
	if err != nil {
		return nil, err
	}
	if len(list) != 1 {
		return nil, errors.New("want one webhook secret")
	}
	hmacKey, err := db.ServerSecret(ctx, "cursor-hmac")
	if err != nil {
		return nil, err
	}
	pem, err := db.WebhookSigningKey(ctx, "service", func() ([]byte, error) { return nil, errors.New("regenerated") })
	if err != nil {
		return nil, err
	}
	return map[string]string{"webhook_secrets": list[0].Secret, "server_secrets": string(hmacKey), "webhook_signing_keys": string(pem)}, nil
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Issue 16 item 7: webhook secrets, the installation's signing key and the
// server HMAC keys are sealed at rest under the key ring, and read back
// whole; a store without a key ring refuses to touch them.
func TestSecrets_SealedAtRest(t *testing.T) {
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		kr := ring(t, newKey(t, "k1"))
		db := open(store.Options{Keyring: kr})
		tn, secretID, want := storedSecrets(t, db)
		for table, v := range raw(t, db, secretID) {
			clearHex := want[table]
			if table == "server_secrets" {
				clearHex = hexOf(want[table])
			}
			if !strings.HasPrefix(v, "kr1:k1:") || strings.Contains(v, clearHex) || strings.Contains(v, "BEGIN") {
				t.Errorf("%s holds %q", table, v)
			}
		}
		again := open(store.Options{Keyring: kr}) // a fresh node: nothing cached
		if got, err := readBack(again, tn); err != nil || !equalMaps(got, want) {
			t.Fatalf("read back %v, %v", got, err)
		}
		// A sealed value moved to another row does not open there.
		v := raw(t, db, secretID)["webhook_secrets"]
		if err := db.ExecRaw(ctx, `UPDATE server_secrets SET value = ? WHERE name = 'cursor-hmac'`, v); err != nil {
			t.Fatal(err)
		}
		if _, err := open(store.Options{Keyring: kr}).ServerSecret(ctx, "cursor-hmac"); !errors.Is(err, keyring.ErrOpen) {
			t.Fatalf("a value sealed for another row opened: %v", err)
		}
	})
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

// Secrets stored in clear before encryption at rest are read as they are,
// and SealSecrets seals them without changing them.
func TestSecrets_ClearValuesAreSealedWithoutLoss(t *testing.T) {
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		kr := ring(t, newKey(t, "k1"))
		db := open(store.Options{Keyring: kr})
		tn, secretID, want := storedSecrets(t, db)
		// Put them back in clear, as a database from before would hold them.
		for _, stmt := range []struct{ q, v string }{
			{`UPDATE webhook_secrets SET secret = ? WHERE id = '` + secretID + `'`, want["webhook_secrets"]},
			{`UPDATE server_secrets SET value = ? WHERE name = 'cursor-hmac'`, hexOf(want["server_secrets"])},
			{`UPDATE webhook_signing_keys SET private_pem = ? WHERE name = 'service'`, want["webhook_signing_keys"]},
		} {
			if err := db.ExecRaw(ctx, stmt.q, stmt.v); err != nil {
				t.Fatal(err)
			}
		}
		node := open(store.Options{Keyring: kr})
		if got, err := readBack(node, tn); err != nil || !equalMaps(got, want) {
			t.Fatalf("clear values read back %v, %v", got, err)
		}
		n, err := node.SealSecrets(ctx)
		if err != nil || n["webhook_secrets"] != 1 || n["server_secrets"] != 1 || n["webhook_signing_keys"] != 1 {
			t.Fatalf("SealSecrets = %v, %v", n, err)
		}
		for table, v := range raw(t, node, secretID) {
			if !strings.HasPrefix(v, "kr1:k1:") {
				t.Errorf("%s still in clear: %q", table, v)
			}
		}
		if got, err := readBack(open(store.Options{Keyring: kr}), tn); err != nil || !equalMaps(got, want) {
			t.Fatalf("after sealing %v, %v", got, err)
		}
		if n, err := node.SealSecrets(ctx); err != nil || n["webhook_secrets"]+n["server_secrets"]+n["webhook_signing_keys"] != 0 {
			t.Fatalf("a second run re-sealed %v, %v", n, err)
		}
	})
}

// Rotation: a ring with a new active key and the old one reads everything;
// SealSecrets moves every value to the new key; then the old key can go,
// and a ring of the old key alone no longer opens anything.
func TestSecrets_KeyRotation(t *testing.T) {
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		old, next := newKey(t, "old"), newKey(t, "new")
		db := open(store.Options{Keyring: ring(t, old)})
		tn, secretID, want := storedSecrets(t, db)

		rotated := open(store.Options{Keyring: ring(t, next, old)})
		if got, err := readBack(rotated, tn); err != nil || !equalMaps(got, want) {
			t.Fatalf("old values under the rotated ring: %v, %v", got, err)
		}
		if n, err := rotated.SealSecrets(ctx); err != nil || n["webhook_secrets"] != 1 || n["server_secrets"] != 1 || n["webhook_signing_keys"] != 1 {
			t.Fatalf("SealSecrets = %v, %v", n, err)
		}
		for table, v := range raw(t, rotated, secretID) {
			if id, _ := keyring.KeyID([]byte(v)); id != "new" {
				t.Errorf("%s sealed under %q after rotation", table, id)
			}
		}
		if got, err := readBack(open(store.Options{Keyring: ring(t, next)}), tn); err != nil || !equalMaps(got, want) {
			t.Fatalf("new key alone: %v, %v", got, err)
		}
		if _, err := readBack(open(store.Options{Keyring: ring(t, old)}), tn); !errors.Is(err, keyring.ErrUnknownKey) {
			t.Fatalf("old key alone after rotation: %v", err)
		}
		// A ring that opens nothing stops SealSecrets; the values stay.
		stranger := open(store.Options{Keyring: ring(t, newKey(t, "stranger"))})
		if _, err := stranger.SealSecrets(ctx); !errors.Is(err, keyring.ErrUnknownKey) {
			t.Fatalf("SealSecrets with a foreign ring: %v", err)
		}
		if got, err := readBack(open(store.Options{Keyring: ring(t, next)}), tn); err != nil || !equalMaps(got, want) {
			t.Fatalf("after a failed SealSecrets: %v, %v", got, err)
		}
	})
}

// A store opened without a key ring refuses to write or read a secret
// rather than storing it in clear.
func TestSecrets_NoKeyring(t *testing.T) {
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		db := open(store.Options{Keyring: ring(t, newKey(t, "k1"))})
		tn, _, _ := storedSecrets(t, db)
		none := open(store.Options{})
		none.DropKeyring()
		if _, err := none.ServerSecret(ctx, "another"); !errors.Is(err, store.ErrNoKeyring) {
			t.Fatalf("ServerSecret: %v", err)
		}
		if _, err := none.Read().ActiveWebhookSecrets(ctx, tn, time.Unix(0, 0)); !errors.Is(err, store.ErrNoKeyring) {
			t.Fatalf("ActiveWebhookSecrets: %v", err)
		}
		if _, err := none.SealSecrets(ctx); !errors.Is(err, store.ErrNoKeyring) {
			t.Fatalf("SealSecrets: %v", err)
		}
	})
}
