package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/keyring"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Key-encryption keys (docs/architecture.md, "Secrets at rest"): the keys
// that seal the secrets the database keeps. The operator gives them in
// $PAYMENTS_KEYS or in a file (--keys-file, $PAYMENTS_KEYS_FILE); on a
// laptop (SQLite) without either, paymentsd makes a file beside the
// database.

func keysFlag(fs *flag.FlagSet, dst *string) {
	fs.StringVar(dst, "keys-file", env("PAYMENTS_KEYS_FILE", ""),
		"file of key-encryption keys (id:base64 per line, the first seals; mode 0600); default with SQLite: "+
			"the database path + .keys, made on first start; required with PostgreSQL unless $PAYMENTS_KEYS holds the keys ($PAYMENTS_KEYS_FILE)")
}

// defaultKeysFile is the key file of a SQLite database: beside it.
func defaultKeysFile(databaseURL string) (string, bool) {
	path, ok := strings.CutPrefix(databaseURL, "sqlite:")
	if !ok {
		return "", false
	}
	path = strings.TrimPrefix(path, "//")
	return filepath.Join(filepath.Dir(path), filepath.Base(path)+".keys"), true
}

// loadKeyring finds the key ring: $PAYMENTS_KEYS, else the key file, else
// (SQLite) the file beside the database, made if missing.
// openStore opens the store for a one-shot operator command (keys rotate,
// platforms create): the key ring as loadKeyring finds it, and a small
// pool. The caller closes it.
func openStore(ctx context.Context, dbURL, keysFile string, log *slog.Logger) (*store.DB, error) {
	kr, err := loadKeyring(dbURL, keysFile, log)
	if err != nil {
		return nil, err
	}
	return openCommandStore(ctx, dbURL, kr)
}

// openCommandStore opens the store with the small pool of an operator
// command; kr nil for a command that touches no secret (limits set).
func openCommandStore(ctx context.Context, dbURL string, kr *keyring.Keyring) (*store.DB, error) {
	return store.Open(ctx, dbURL, store.Options{MaxConns: 2, Keyring: kr})
}

func loadKeyring(databaseURL, keysFile string, log *slog.Logger) (*keyring.Keyring, error) {
	inline := os.Getenv("PAYMENTS_KEYS")
	switch {
	case inline != "" && keysFile != "":
		return nil, errors.New("both PAYMENTS_KEYS and a keys file are set; give the key-encryption keys one way")
	case inline != "":
		kr, err := keyring.Parse(inline)
		if err != nil {
			return nil, fmt.Errorf("PAYMENTS_KEYS: %w", err)
		}
		return kr, nil
	case keysFile != "":
		return keyring.LoadFile(keysFile)
	}
	path, ok := defaultKeysFile(databaseURL)
	if !ok {
		return nil, errors.New("PostgreSQL needs key-encryption keys for the secrets it stores: set PAYMENTS_KEYS_FILE " +
			"(or PAYMENTS_KEYS) to keys made by `paymentsd keys generate` (docs/architecture.md, \"Secrets at rest\")")
	}
	kr, created, err := keyring.LoadOrCreateFile(path)
	if err != nil {
		return nil, err
	}
	if created {
		log.Warn("generated a key-encryption key beside the SQLite database; back it up with the database, "+
			"without it the stored webhook secrets and signing keys cannot be read", "keys_file", path, "key_id", kr.ActiveID())
	}
	return kr, nil
}

// sealSecrets seals secrets stored in clear or under an older key.
func sealSecrets(ctx context.Context, db *store.DB, log *slog.Logger) error {
	n, err := db.SealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("sealing stored secrets under key %s: %w (is a key missing from the key ring?)", db.Keyring().ActiveID(), err)
	}
	total := 0
	for _, c := range n {
		total += c
	}
	if total > 0 {
		log.Info("sealed stored secrets under the active key", "key_id", db.Keyring().ActiveID(), "count", n)
	}
	return nil
}

func keysGenerate(stdout io.Writer) error {
	k, err := keyring.Generate(keyring.NewID(time.Now()))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, k.Encode())
	return err
}

// keysRotate makes a new key the active one and re-seals every stored
// secret under it. With a key file, the new key is added at its top (the
// old keys stay, and may be removed afterwards); with $PAYMENTS_KEYS, the
// operator has put the new key first, and this re-seals.
func keysRotate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paymentsd keys rotate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var dbURL, keysFile string
	databaseFlag(fs, &dbURL)
	keysFlag(fs, &keysFile)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if os.Getenv("PAYMENTS_KEYS") == "" {
		path := keysFile
		if path == "" {
			var ok bool
			if path, ok = defaultKeysFile(dbURL); !ok {
				return errors.New("give the key file to rotate (--keys-file or PAYMENTS_KEYS_FILE)")
			}
		}
		if _, err := keyring.PrependNewKey(path); err != nil {
			return err
		}
		keysFile = path
	}
	db, err := openStore(ctx, dbURL, keysFile, log)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.SealSecrets(ctx)
	if err != nil {
		return err
	}
	kr := db.Keyring()
	return json.NewEncoder(stdout).Encode(map[string]any{"activeKey": kr.ActiveID(), "keys": kr.IDs(), "resealed": n})
}
