// Package blobstore keeps opaque files (KYC documents, bulk-import CSV
// uploads) outside the database. Callers name blobs with keys from NewKey,
// never with anything a user chose, and keep the key in their own rows.
//
// The default implementation, FS, writes files under one directory; another
// implementation (an object store) only has to satisfy Store. Several nodes
// must see the same blobs: give them one shared directory (a network
// filesystem) or an object-store implementation.
package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/google/uuid"
)

// ErrNotFound is returned by Get for a key that holds no blob.
var ErrNotFound = errors.New("blobstore: not found")

// Store keeps blobs by key.
type Store interface {
	// Put stores everything r yields under key and reports its size and
	// SHA-256 (hex). The blob appears whole or not at all: when r fails,
	// nothing is left behind and r's error is returned.
	Put(ctx context.Context, key string, r io.Reader) (size int64, sha256 string, err error)
	// Get opens a blob; the caller closes it.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes a blob. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// NewKey returns a fresh key: a UUIDv7, so keys sort by creation time.
func NewKey() string {
	u, err := uuid.NewV7()
	if err != nil {
		panic("blobstore: " + err.Error())
	}
	return u.String()
}

// keyRE is the shape of an acceptable key: what NewKey makes, or any short
// run of lowercase letters, digits and '-'. Nothing that could climb out of
// the root directory.
var keyRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{7,127}$`)

// ValidKey reports whether key may name a blob.
func ValidKey(key string) bool { return keyRE.MatchString(key) }

// FS stores each blob as one file under Root, fanned out into 256
// subdirectories by the key's last two characters. Writes go to a temporary
// file in Root/tmp, are synced, then renamed into place, so a reader never
// sees half a blob and a crash leaves at most a stray temporary file.
type FS struct {
	Root string
}

// NewFS returns a store rooted at dir, creating it (mode 0700) if missing.
func NewFS(dir string) (*FS, error) {
	if dir == "" {
		return nil, errors.New("blobstore: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(abs, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("blobstore: create %s: %w", abs, err)
	}
	return &FS{Root: abs}, nil
}

func (f *FS) path(key string) (string, error) {
	if !ValidKey(key) {
		return "", fmt.Errorf("blobstore: invalid key %q", key)
	}
	return filepath.Join(f.Root, key[len(key)-2:], key), nil
}

// Put implements Store.
func (f *FS) Put(ctx context.Context, key string, r io.Reader) (int64, string, error) {
	final, err := f.path(key)
	if err != nil {
		return 0, "", err
	}
	tmp, err := os.CreateTemp(filepath.Join(f.Root, "tmp"), "put-*")
	if err != nil {
		return 0, "", fmt.Errorf("blobstore: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx: ctx, r: r})
	if err != nil {
		return 0, "", err
	}
	if err := tmp.Sync(); err != nil {
		return 0, "", fmt.Errorf("blobstore: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, "", fmt.Errorf("blobstore: close: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return 0, "", fmt.Errorf("blobstore: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		_ = os.Remove(tmp.Name())
		done = true
		return 0, "", fmt.Errorf("blobstore: rename: %w", err)
	}
	done = true
	syncDir(filepath.Dir(final))
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// Get implements Store.
func (f *FS) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return file, err
}

// Delete implements Store.
func (f *FS) Delete(_ context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("blobstore: %w", err)
	}
	return nil
}

// syncDir makes a rename durable; failure only weakens durability, so it is
// ignored (some filesystems refuse to sync directories).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
