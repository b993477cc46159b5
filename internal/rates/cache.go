package rates

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultTTL is how long a cached rate is served: about five minutes (Part B,
// Limits: exchange-rate cache).
const DefaultTTL = 5 * time.Minute

// Cache serves each pair's rate from memory for TTL after fetching it, so
// repeated calls within the window return the same rate and AsOf (R-RATE-05).
// Concurrent misses on one pair make one call to the source; errors are not
// cached. Safe for concurrent use.
type Cache struct {
	src Source
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	entries  map[pair]cached
	inflight map[pair]*fetch
}

type pair struct{ from, to string }

type cached struct {
	q       Quote
	fetched time.Time
}

type fetch struct {
	done chan struct{}
	q    Quote
	err  error
}

// NewCache wraps src. ttl <= 0 means DefaultTTL; now nil means time.Now (tests
// pass a fake clock).
func NewCache(src Source, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, ttl: ttl, now: now, entries: map[pair]cached{}, inflight: map[pair]*fetch{}}
}

// TTL reports how long entries are served.
func (c *Cache) TTL() time.Duration { return c.ttl }

// Rate implements Source.
func (c *Cache) Rate(ctx context.Context, from, to string) (Quote, error) {
	k := pair{from, to}
	for {
		c.mu.Lock()
		if e, ok := c.entries[k]; ok {
			if age := c.now().Sub(e.fetched); age >= 0 && age < c.ttl {
				c.mu.Unlock()
				return e.q, nil
			}
		}
		if f, ok := c.inflight[k]; ok {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return Quote{}, ctx.Err()
			}
			// The fetch we waited for failed only because its caller gave up:
			// try again on our own context.
			if f.err != nil && isContextErr(f.err) && ctx.Err() == nil {
				continue
			}
			return f.q, f.err
		}
		f := &fetch{done: make(chan struct{})}
		c.inflight[k] = f
		c.mu.Unlock()

		q, err := c.src.Rate(ctx, from, to)

		c.mu.Lock()
		delete(c.inflight, k)
		if err == nil {
			c.entries[k] = cached{q: q, fetched: c.now()}
		}
		f.q, f.err = q, err
		close(f.done)
		c.mu.Unlock()
		return q, err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
