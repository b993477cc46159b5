package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
)

// ServerSecret returns the named random secret, creating it on first use.
// Secrets kept in the database are shared by every node and survive restarts,
// so a cursor signed by one node verifies on another.
func (db *DB) ServerSecret(ctx context.Context, name string) ([]byte, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	err := db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, name, hex.EncodeToString(buf), toMicros(db.now()))
		return err
	})
	if err != nil {
		return nil, err
	}
	var v string
	if err := db.Read().queryRow(ctx, `SELECT value FROM server_secrets WHERE name = ?`, name).Scan(&v); err != nil {
		return nil, classify(err)
	}
	secret, err := hex.DecodeString(v)
	if err != nil || len(secret) < 16 {
		return nil, errors.New("store: server secret " + name + " is corrupt")
	}
	return secret, nil
}
