package ratelimit

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := New(2, 3)
	l.SetClock(func() time.Time { return now })
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("burst request %d refused", i)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("4th request: ok=%v wait=%v, want refused with wait in (0,1s]", ok, wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("buckets are per key")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("one token refills after 1/rate seconds")
	}
	now = now.Add(time.Hour)
	l.Allow("c") // triggers a sweep
	if _, kept := l.buckets["b"]; kept {
		t.Fatal("idle full buckets are swept")
	}
}
