package keyring

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LoadFile reads a key file (Parse's format). A file others can read is
// refused: it holds the keys to every secret in the database.
func LoadFile(path string) (*Keyring, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("keyring: %s is readable by others (mode %v); chmod 600 it", path, info.Mode().Perm())
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	r, err := Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// LoadOrCreateFile reads the key file at path, or, when there is none,
// creates it (mode 0600, its directory 0700) with one new key. created says
// which happened.
func LoadOrCreateFile(path string) (r *Keyring, created bool, err error) {
	r, err = LoadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return r, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("keyring: %w", err)
	}
	k, err := Generate(NewID(time.Now()))
	if err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process made it first
		r, err = LoadFile(path)
		return r, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("keyring: %w", err)
	}
	_, werr := f.WriteString(header + k.Encode() + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(path)
		return nil, false, fmt.Errorf("keyring: write %s: %w", path, err)
	}
	r, err = New(k)
	return r, true, err
}

const header = "# paymentsd key-encryption keys: id:base64, the first seals, all open. Back this file up with the\n" +
	"# database: without it the webhook secrets and signing keys stored there cannot be read.\n"

// PrependNewKey adds a new active key in front of the keys of the file at
// path, atomically (the old keys stay, to open what they sealed), and
// returns the new key's id.
func PrependNewKey(path string) (string, error) {
	old, err := LoadFile(path)
	if err != nil {
		return "", err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	id := NewID(time.Now())
	for _, used := range old.IDs() {
		if used == id {
			id += "b"
		}
	}
	k, err := Generate(id)
	if err != nil {
		return "", err
	}
	body := strings.TrimPrefix(string(text), header)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(header+k.Encode()+"\n"+body), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return id, nil
}

// NewID names a key after the time it was made, e.g. k20261125T221700.
func NewID(now time.Time) string { return "k" + now.UTC().Format("20060102T150405") }
