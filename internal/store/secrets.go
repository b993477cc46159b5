package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/paymentsd/paymentsd/internal/keyring"
)

// Secrets at rest. The store keeps three kinds of secret: the installation's
// server secrets (HMAC keys of cursors, contact codes, KYC links), the
// tenants' webhook signing secrets and the installation's webhook signing
// key. Each is sealed under the key ring (Options.Keyring, package keyring)
// with associated data naming its table and row, so a sealed value copied to
// another row does not open. Values written before encryption at rest are
// in clear; they are read as they are, and SealSecrets seals them.

// ErrNoKeyring: a secret was read or written by a store opened without a key
// ring.
var ErrNoKeyring = errors.New("store: no key ring to seal secrets with (Options.Keyring)")

// Keyring returns the store's key ring (nil when none was given), for
// packages that seal secrets of their own.
func (db *DB) Keyring() *keyring.Keyring { return db.opts.Keyring }

// place is the associated data of a sealed value: its table and row.
func place(table, row string) []byte { return []byte(table + "/" + row) }

// seal seals a secret for its place.
func (q Q) seal(table, row, plaintext string) (string, error) {
	if q.keys == nil {
		return "", ErrNoKeyring
	}
	b, err := q.keys.Seal([]byte(plaintext), place(table, row))
	return string(b), err
}

// open returns the secret stored at a place: opened when sealed, as it is
// when stored before encryption at rest.
func (q Q) open(table, row, stored string) (string, error) {
	if !keyring.IsSealed([]byte(stored)) {
		return stored, nil
	}
	if q.keys == nil {
		return "", ErrNoKeyring
	}
	b, err := q.keys.Open([]byte(stored), place(table, row))
	if err != nil {
		return "", fmt.Errorf("store: %s %s: %w", table, row, err)
	}
	return string(b), nil
}

// ServerSecret returns the named random secret, creating it on first use.
// Secrets kept in the database are shared by every node and survive restarts,
// so a cursor signed by one node verifies on another. A node keeps what it
// opened: a secret never changes (re-sealing keeps its value).
func (db *DB) ServerSecret(ctx context.Context, name string) ([]byte, error) {
	db.secretsMu.Lock()
	cached, ok := db.serverSecrets[name]
	db.secretsMu.Unlock()
	if ok {
		return cached, nil
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	err := db.InTx(ctx, func(tx *Tx) error {
		sealed, err := tx.seal("server_secrets", name, hex.EncodeToString(buf))
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, name, sealed, toMicros(db.now()))
		return err
	})
	if err != nil {
		return nil, err
	}
	q := db.Read()
	var v string
	if err := q.queryRow(ctx, `SELECT value FROM server_secrets WHERE name = ?`, name).Scan(&v); err != nil {
		return nil, classify(err)
	}
	if v, err = q.open("server_secrets", name, v); err != nil {
		return nil, err
	}
	secret, err := hex.DecodeString(v)
	if err != nil || len(secret) < 16 {
		return nil, errors.New("store: server secret " + name + " is corrupt")
	}
	db.secretsMu.Lock()
	db.serverSecrets[name] = secret
	db.secretsMu.Unlock()
	return secret, nil
}

// secretColumn is one kind of stored secret: where it lives.
type secretColumn struct{ table, key, value string }

var secretColumns = []secretColumn{
	{"server_secrets", "name", "value"},
	{"webhook_secrets", "id", "secret"},
	{"webhook_signing_keys", "name", "private_pem"},
}

// SealSecrets seals, under the key ring's active key, every stored secret
// that is in clear (written before encryption at rest) or sealed under an
// older key, and returns how many it re-sealed per table. paymentsd runs it
// at every start and in `paymentsd keys rotate`; once it has run with a new
// active key on every node, older keys can leave the ring. A value that no
// key of the ring opens stops it with an error: nothing is lost.
func (db *DB) SealSecrets(ctx context.Context) (map[string]int, error) {
	if db.opts.Keyring == nil {
		return nil, ErrNoKeyring
	}
	out := map[string]int{}
	for _, c := range secretColumns {
		n, err := db.sealColumn(ctx, c)
		if err != nil {
			return out, err
		}
		out[c.table] = n
	}
	return out, nil
}

func (db *DB) sealColumn(ctx context.Context, c secretColumn) (int, error) {
	n := 0
	err := db.InTx(ctx, func(tx *Tx) error {
		n = 0
		rows, err := tx.query(ctx, `SELECT `+c.key+`, `+c.value+` FROM `+c.table)
		if err != nil {
			return err
		}
		type row struct{ key, value string }
		var stale []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.key, &r.value); err != nil {
				rows.Close()
				return classify(err)
			}
			if !tx.keys.Current([]byte(r.value)) {
				stale = append(stale, r)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return classify(err)
		}
		for _, r := range stale {
			clear, err := tx.open(c.table, r.key, r.value)
			if err != nil {
				return err
			}
			sealed, err := tx.seal(c.table, r.key, clear)
			if err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `UPDATE `+c.table+` SET `+c.value+` = ? WHERE `+c.key+` = ?`, sealed, r.key); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
