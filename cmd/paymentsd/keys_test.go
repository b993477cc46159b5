package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/keyring"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Where the key-encryption keys come from: PAYMENTS_KEYS, a key file, or
// on SQLite a file made beside the database (mode 0600, announced in the
// log); PostgreSQL without keys does not start.
func TestLoadKeyring(t *testing.T) {
	t.Setenv("PAYMENTS_KEYS", "")
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "payments.db")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	kr, err := loadKeyring(dbURL, "", log)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "payments.db.keys")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", info, err)
	}
	if !strings.Contains(logs.String(), "generated a key-encryption key") || !strings.Contains(logs.String(), path) {
		t.Fatalf("the log does not say a key was generated: %s", logs.String())
	}
	logs.Reset()
	again, err := loadKeyring(dbURL, "", log)
	if err != nil || again.ActiveID() != kr.ActiveID() || logs.Len() != 0 {
		t.Fatalf("second start: %v %v %q", again, err, logs.String())
	}
	if _, err := loadKeyring("postgres://x@127.0.0.1/db", "", log); err == nil || !strings.Contains(err.Error(), "PAYMENTS_KEYS_FILE") {
		t.Fatalf("PostgreSQL without keys: %v", err)
	}
	if kr, err := loadKeyring("postgres://x@127.0.0.1/db", path, log); err != nil || kr.ActiveID() != again.ActiveID() {
		t.Fatalf("PostgreSQL with a key file: %v", err)
	}
	k, _ := keyring.Generate("env1")
	t.Setenv("PAYMENTS_KEYS", k.Encode())
	if kr, err := loadKeyring("postgres://x@127.0.0.1/db", "", log); err != nil || kr.ActiveID() != "env1" {
		t.Fatalf("PAYMENTS_KEYS: %v", err)
	}
	if _, err := loadKeyring(dbURL, path, log); err == nil {
		t.Fatal("both PAYMENTS_KEYS and a key file accepted")
	}
	t.Setenv("PAYMENTS_KEYS", "nonsense")
	if _, err := loadKeyring(dbURL, "", log); err == nil || !strings.Contains(err.Error(), "PAYMENTS_KEYS") {
		t.Fatalf("bad PAYMENTS_KEYS: %v", err)
	}
}

// `paymentsd keys rotate` on a laptop install: a new key heads the file,
// the old one stays, every stored secret is sealed under the new key and
// still reads the same.
func TestKeysRotate(t *testing.T) {
	t.Setenv("PAYMENTS_KEYS", "")
	t.Setenv("PAYMENTS_KEYS_FILE", "")
	ctx := context.Background()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "payments.db")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	kr, err := loadKeyring(dbURL, "", log)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, dbURL, store.Options{Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	before, err := db.ServerSecret(ctx, "cursor-hmac")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"keys", "rotate", "--database-url", dbURL}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var res struct {
		ActiveKey string         `json:"activeKey"`
		Keys      []string       `json:"keys"`
		Resealed  map[string]int `json:"resealed"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.ActiveKey == kr.ActiveID() ||
		len(res.Keys) != 2 || res.Keys[1] != kr.ActiveID() || res.Resealed["server_secrets"] != 1 {
		t.Fatalf("rotate said %s (%v)", out.String(), err)
	}
	rotated, err := keyring.LoadFile(filepath.Join(dir, "payments.db.keys"))
	if err != nil || rotated.ActiveID() != res.ActiveKey {
		t.Fatalf("key file after rotation: %v %v", rotated, err)
	}
	newOnly, _ := keyring.Parse(firstLine(t, filepath.Join(dir, "payments.db.keys")))
	db, err = store.Open(ctx, dbURL, store.Options{Keyring: newOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after, err := db.ServerSecret(ctx, "cursor-hmac"); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("after rotation, with the new key alone: %v", err)
	}
}

func firstLine(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	t.Fatal("no key in file")
	return ""
}

func TestKeysGenerate(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keys", "generate"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := keyring.Parse(out.String()); err != nil {
		t.Fatalf("generated key %q does not parse: %v", out.String(), err)
	}
}
