package webhooks

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff spaces the attempts of one delivery: exponential, with jitter so
// that many deliveries failing together (a receiver that was down) do not come
// back together, and a window after which the delivery gives up.
//
// With the defaults the delays are about 30s, 1m, 2m, 4m … doubling up to 8h,
// which makes about 19 attempts spread over 3 days.
type Backoff struct {
	First  time.Duration // delay after the first failed attempt
	Max    time.Duration // no delay is longer (before jitter)
	Jitter float64       // each delay is scaled by a random factor in [1-Jitter, 1+Jitter]
	Window time.Duration // no attempt starts later than this after the window began
	// MaxRetryAfter caps how long a receiver's Retry-After can defer the next
	// attempt, so a bogus value cannot park a delivery for ever.
	MaxRetryAfter time.Duration
}

// DefaultBackoff is the schedule the workers use unless told otherwise.
var DefaultBackoff = Backoff{First: 30 * time.Second, Max: 8 * time.Hour, Jitter: 0.2, Window: 72 * time.Hour,
	MaxRetryAfter: 24 * time.Hour}

func (b Backoff) withDefaults() Backoff {
	d := DefaultBackoff
	if b.First > 0 {
		d.First = b.First
	}
	if b.Max > 0 {
		d.Max = b.Max
	}
	if b.Jitter > 0 && b.Jitter < 1 {
		d.Jitter = b.Jitter
	}
	if b.Window > 0 {
		d.Window = b.Window
	}
	if b.MaxRetryAfter > 0 {
		d.MaxRetryAfter = b.MaxRetryAfter
	}
	return d
}

// Delay is the wait after the attempt-th failed attempt (1 for the first).
// r is a uniform random number in [0, 1); retryAfter, when positive, is what
// the receiver asked for and is a lower bound (up to MaxRetryAfter).
func (b Backoff) Delay(attempt int, retryAfter time.Duration, r float64) time.Duration {
	b = b.withDefaults()
	if attempt < 1 {
		attempt = 1
	}
	base := float64(b.First) * math.Pow(2, float64(attempt-1))
	if base > float64(b.Max) {
		base = float64(b.Max)
	}
	d := time.Duration(base * (1 - b.Jitter + 2*b.Jitter*r))
	if retryAfter > b.MaxRetryAfter {
		retryAfter = b.MaxRetryAfter
	}
	return max(d, retryAfter)
}

// Next returns when the next attempt should start after a failure at `now`,
// or ok=false when that would fall outside the window that began at
// windowStart: the delivery has failed for good.
func (b Backoff) Next(windowStart, now time.Time, attempt int, retryAfter time.Duration, r float64) (next time.Time, ok bool) {
	next = now.Add(b.Delay(attempt, retryAfter, r))
	return next, !next.After(windowStart.Add(b.withDefaults().Window))
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110, section 10.2.3). Zero when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(math.MaxInt64/time.Second) {
			secs = int64(math.MaxInt64 / time.Second)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
