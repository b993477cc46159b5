package webhooks

import (
	"net/http"
	"testing"
	"time"
)

// Delays double from First up to Max, each scaled by a jitter factor in
// [1-Jitter, 1+Jitter].
func TestBackoff_ExponentialWithJitter(t *testing.T) {
	b := DefaultBackoff
	for n := 1; n <= 20; n++ {
		base := min(b.First<<(n-1), b.Max)
		lo, mid, hi := b.Delay(n, 0, 0), b.Delay(n, 0, 0.5), b.Delay(n, 0, 0.999999)
		if mid != base {
			t.Fatalf("attempt %d: delay without jitter %v, want %v", n, mid, base)
		}
		wantLo, wantHi := time.Duration(float64(base)*(1-b.Jitter)), time.Duration(float64(base)*(1+b.Jitter))
		if lo != wantLo || hi > wantHi || hi < wantHi-time.Second {
			t.Fatalf("attempt %d: jitter range [%v, %v], want [%v, %v]", n, lo, hi, wantLo, wantHi)
		}
		if n > 1 && n < 11 && mid != 2*b.Delay(n-1, 0, 0.5) {
			t.Fatalf("attempt %d: delay %v is not double the previous", n, mid)
		}
	}
	if b.Delay(1000, 0, 0.5) != b.Max {
		t.Fatal("huge attempt numbers stay at Max")
	}
}

// The whole schedule: attempts keep coming for about three days, then stop.
func TestBackoff_ScheduleSpansAboutThreeDays(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999} {
		b := DefaultBackoff
		start := time.Date(2025, 10, 13, 0, 0, 0, 0, time.UTC)
		now, n := start, 1
		for {
			next, ok := b.Next(start, now, n, 0, r)
			if !ok {
				break
			}
			now, n = next, n+1
		}
		span := now.Sub(start)
		if span < 60*time.Hour || span > 72*time.Hour || n < 15 || n > 25 {
			t.Fatalf("r=%v: %d attempts over %v; want about 3 days", r, n, span)
		}
	}
}

// Retry-After is a lower bound on the next delay, capped by MaxRetryAfter.
func TestBackoff_HonoursRetryAfter(t *testing.T) {
	b := DefaultBackoff
	if got := b.Delay(1, time.Hour, 0.5); got != time.Hour {
		t.Fatalf("Retry-After 1h after the first attempt: %v", got)
	}
	if got := b.Delay(15, time.Minute, 0.5); got != b.Max {
		t.Fatalf("a short Retry-After does not shorten the backoff: %v", got)
	}
	if got := b.Delay(1, 1000*time.Hour, 0.5); got != b.MaxRetryAfter {
		t.Fatalf("Retry-After is capped: %v", got)
	}
	start := time.Now()
	if _, ok := b.Next(start, start.Add(71*time.Hour), 10, 2*time.Hour, 0.5); ok {
		t.Fatal("a Retry-After past the window ends the delivery")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":     0,
		"120":  2 * time.Minute,
		" 5 ":  5 * time.Second,
		"0":    0,
		"-3":   0,
		"soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		"99999999999999999999":                            0, // does not parse as int64
		"9223372036854775807":                             time.Duration(9223372036854775807/int64(time.Second)) * time.Second,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
