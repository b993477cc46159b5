package httpapi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// A duplicate of a request still in flight waits for it without writing:
// the holder settling its key in this process wakes the waiters at once
// (idemWaits), and a read of the key every idemPollInterval covers a holder
// on another node, or one whose wake-up was missed. Claiming again (a write
// transaction, which on SQLite takes the one writer) happens only when the
// key was released or its holder's lock expired.
const idemPollInterval = 50 * time.Millisecond

// idemWaits wakes the requests waiting on a key when this process settles
// it.
type idemWaits struct {
	mu sync.Mutex
	ch map[idemWaitKey]chan struct{}
}

type idemWaitKey struct {
	tenant store.Tenant
	key    string
}

// wait returns a channel closed when the key is next settled here.
func (w *idemWaits) wait(t store.Tenant, key string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = map[idemWaitKey]chan struct{}{}
	}
	k := idemWaitKey{t, key}
	c, ok := w.ch[k]
	if !ok {
		c = make(chan struct{})
		w.ch[k] = c
	}
	return c
}

// settled wakes the key's waiters (its response is stored, or the claim
// released).
func (w *idemWaits) settled(t store.Tenant, key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := idemWaitKey{t, key}
	if c, ok := w.ch[k]; ok {
		close(c)
		delete(w.ch, k)
	}
}

// awaitSettled waits, reading only, until the in-flight key is finished
// (returned), released or its lock expired (nil: claim again), or deadline
// passes (nil: the caller's next claim reports it still in progress).
func (s *Server) awaitSettled(ctx context.Context, t store.Tenant, key string, deadline time.Time) (*store.IdemRecord, error) {
	for {
		woken := s.idemWaits.wait(t, key) // before the read, so no wake-up is lost
		rec, err := s.db.Read().GetIdempotencyKey(ctx, t, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, nil
		case err != nil:
			return nil, err
		case rec.Done():
			return &rec, nil
		case !rec.LockedUntil.After(s.db.Now()), !time.Now().Before(deadline):
			return nil, nil
		}
		poll := time.NewTimer(min(idemPollInterval, time.Until(deadline)))
		select {
		case <-ctx.Done():
			poll.Stop()
			return nil, ctx.Err()
		case <-woken:
			poll.Stop()
		case <-poll.C:
		}
	}
}
