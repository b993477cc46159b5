package blobstore

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestLimit(t *testing.T) {
	fs, err := NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, _, err := fs.Put(ctx, NewKey(), Limit(strings.NewReader("12345"), 5)); err != nil || n != 5 {
		t.Fatalf("at the bound: %d %v", n, err)
	}
	key := NewKey()
	if _, _, err := fs.Put(ctx, key, Limit(strings.NewReader("123456"), 5)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the bound: %v", err)
	}
	if _, err := fs.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an oversize upload must leave no file: %v", err)
	}
}
