package blobstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestFS_PutGetDelete(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "blobs")
	fs, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := NewKey()
	data := bytes.Repeat([]byte("paymentsd"), 1000)
	n, sum, err := fs.Put(ctx, key, bytes.NewReader(data))
	want := sha256.Sum256(data)
	if err != nil || n != int64(len(data)) || sum != hex.EncodeToString(want[:]) {
		t.Fatalf("put: %d %s %v", n, sum, err)
	}
	rc, err := fs.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("round trip changed the blob")
	}
	if err := fs.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := fs.Delete(ctx, key); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
}

type failing struct{ n int }

func (f *failing) Read(p []byte) (int, error) {
	if f.n > 0 {
		f.n--
		return copy(p, "data"), nil
	}
	return 0, errors.New("boom")
}

// A failed write leaves neither the blob nor a temporary file behind.
func TestFS_FailedPutLeavesNothing(t *testing.T) {
	fs, err := NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := NewKey()
	if _, _, err := fs.Put(context.Background(), key, &failing{n: 3}); err == nil || err.Error() != "boom" {
		t.Fatalf("want the reader's error, got %v", err)
	}
	if _, err := fs.Get(context.Background(), key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blob left behind: %v", err)
	}
	if n := countFiles(t, fs.Root); n != 0 {
		t.Fatalf("%d files left behind", n)
	}
}

func TestFS_RefusesUnsafeKeys(t *testing.T) {
	fs, err := NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"", "../../etc/passwd", "a/b", "UPPERCASE-key", "passport.pdf", "short"} {
		if _, _, err := fs.Put(context.Background(), k, bytes.NewReader([]byte("x"))); err == nil {
			t.Errorf("key %q accepted", k)
		}
	}
}

func countFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(root, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
