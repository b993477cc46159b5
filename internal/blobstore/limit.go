package blobstore

import (
	"errors"
	"io"
)

// ErrTooLarge is returned by a Limit reader once more than its bound is read.
var ErrTooLarge = errors.New("blobstore: file too large")

// Limit wraps r so that reading past n bytes fails with ErrTooLarge. Put
// then fails and removes its partial file, so an oversize upload leaves
// nothing behind (unlike io.LimitReader, which would silently truncate).
func Limit(r io.Reader, n int64) io.Reader { return &limited{r: r, n: n} }

type limited struct {
	r io.Reader
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, ErrTooLarge
	}
	return n, err
}
