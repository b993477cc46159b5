package webhooks

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// testPool is an attempt pool of three whose attempts each wait for a
// token from gate.
type testPool struct {
	*attemptPool
	gate             chan struct{}
	delivered, freed atomic.Int64
}

func newTestPool() *testPool {
	p := &testPool{gate: make(chan struct{}, 100)}
	p.attemptPool = &attemptPool{jobs: make(chan store.Claim), max: 3,
		deliver: func(store.Claim) { <-p.gate; p.delivered.Add(1) },
		free:    func(store.Claim) { p.freed.Add(1) }}
	return p
}

// The attempt pool keeps its goroutines between attempts: attempts one
// after another run on at most its three.
func TestAttemptPool_GoroutinesReused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := newTestPool()
	for i := range 50 {
		p.gate <- struct{}{}
		p.run(ctx, store.Claim{})
		drive(t, nil, 0, func() bool { return p.freed.Load() == int64(i+1) })
	}
	if p.started < 1 || p.started > 3 {
		t.Fatalf("%d goroutines for 50 attempts, want 1 to 3", p.started)
	}
	cancel()
	p.wg.Wait()
	if p.delivered.Load() != 50 {
		t.Fatalf("%d attempts ran, want 50", p.delivered.Load())
	}
}

// Once its goroutines are all started and busy, a further attempt waits
// for one; a runner that stops meanwhile frees that attempt's slot without
// running it (its lease expires, as a cut-short attempt's), and the busy
// attempts finish.
func TestAttemptPool_BoundedAndStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newTestPool()
	for range 3 {
		p.run(ctx, store.Claim{})
	}
	if p.started != 3 {
		t.Fatalf("%d goroutines for 3 attempts at once, want 3", p.started)
	}
	returned := make(chan struct{})
	go func() { p.run(ctx, store.Claim{}); close(returned) }()
	select {
	case <-returned:
		t.Fatal("a fourth attempt was taken while three held all three goroutines")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	<-returned
	if p.freed.Load() != 1 || p.delivered.Load() != 0 {
		t.Fatalf("after the stop: freed %d, delivered %d; want 1 and 0 (the waiting attempt freed, not run)",
			p.freed.Load(), p.delivered.Load())
	}
	close(p.gate) // the three busy attempts finish
	p.wg.Wait()
	if p.delivered.Load() != 3 || p.freed.Load() != 4 {
		t.Fatalf("delivered %d, freed %d; want 3 and 4", p.delivered.Load(), p.freed.Load())
	}
}
