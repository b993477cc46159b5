package rates

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

// The sandbox quotes every currency the server knows, every pair of them, and
// the twelve the issue names in particular (R-RATE-01).
func TestSandboxCoversEveryCurrency_R_RATE_01(t *testing.T) {
	s := NewSandbox(newClock().now)
	for _, code := range []string{"USD", "EUR", "GBP", "MXN", "BRL", "INR", "PHP", "NGN", "CNY", "CAD", "BTC", "USDC"} {
		if _, ok := SandboxUSDPrices[code]; !ok {
			t.Errorf("no sandbox price for %s", code)
		}
	}
	for _, from := range currency.Codes() {
		for _, to := range currency.Codes() {
			q, err := s.Rate(context.Background(), from, to)
			if err != nil {
				t.Fatalf("%s→%s: %v", from, to, err)
			}
			if q.Mid.Sign() <= 0 || q.From != from || q.To != to {
				t.Fatalf("%s→%s: %+v", from, to, q)
			}
			if from == to && !q.Mid.Equal(decimal.NewFromInt(1)) {
				t.Fatalf("%s→%s: same-currency rate %s, want exactly 1", from, to, q.Mid)
			}
		}
	}
}

// Rates are exact and deterministic: USD on the sending side is the table
// price itself; other pairs go through USD, rounded to 12 significant digits.
func TestSandboxRatesAreExact(t *testing.T) {
	s := NewSandbox(newClock().now)
	for _, c := range []struct{ from, to, want string }{
		{"USD", "EUR", "1.08"},
		{"USD", "BTC", "65000"},
		{"USD", "JPY", "0.0067"},
		{"EUR", "USD", "0.925925925926"},
		{"BTC", "USD", "0.0000153846153846"},
		{"EUR", "MXN", "0.0537037037037"},
		{"GBP", "EUR", "0.850393700787"},
		{"USDC", "USD", "1"},
	} {
		q, err := s.Rate(context.Background(), c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if q.Mid.String() != c.want {
			t.Errorf("%s→%s = %s, want %s", c.from, c.to, q.Mid, c.want)
		}
	}
}

// A pair without a rate is 400 QUOTE_RATE_UNAVAILABLE.
func TestUnavailablePair_QUOTE_RATE_UNAVAILABLE(t *testing.T) {
	s := NewSandboxWith(map[string]string{"USD": "1", "EUR": "1.08"}, nil)
	_, err := s.Rate(context.Background(), "USD", "NGN")
	e, ok := apierr.From(err)
	if !ok || e.Code != "QUOTE_RATE_UNAVAILABLE" || e.Status != 400 || !IsUnavailable(err) {
		t.Fatalf("got %v", err)
	}
	_, err = Unconfigured{}.Rate(context.Background(), "USD", "EUR")
	if !IsUnavailable(err) {
		t.Fatalf("production without a source: %v", err)
	}
	if q, err := (Unconfigured{}).Rate(context.Background(), "EUR", "EUR"); err != nil || !q.Mid.Equal(decimal.NewFromInt(1)) {
		t.Fatalf("same-currency without a source: %+v %v", q, err)
	}
}

func TestRoundSignificant(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1234.5678", "1234.57"},
		{"0.000123456789", "0.000123457"},
		{"999999.5", "1000000"},
		{"0", "0"},
	} {
		if got := RoundSignificant(decimal.RequireFromString(c.in), 6).String(); got != c.want {
			t.Errorf("RoundSignificant(%s, 6) = %s, want %s", c.in, got, c.want)
		}
	}
}

type countingSource struct {
	calls atomic.Int64
	inner Source
	gate  chan struct{} // when set, each call waits for it
	fail  atomic.Bool
}

func (c *countingSource) Rate(ctx context.Context, from, to string) (Quote, error) {
	c.calls.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return Quote{}, ctx.Err()
		}
	}
	if c.fail.Load() {
		return Quote{}, errors.New("source down")
	}
	return c.inner.Rate(ctx, from, to)
}

// R-RATE-05: within about five minutes the cache answers the same rate and
// updatedAt without asking the source; after that it refreshes.
func TestCacheHitsThenRefreshes_R_RATE_05(t *testing.T) {
	clk := newClock()
	src := &countingSource{inner: NewSandbox(clk.now)}
	c := NewCache(src, 0, clk.now)
	if c.TTL() != 5*time.Minute {
		t.Fatalf("default TTL %s", c.TTL())
	}
	ctx := context.Background()
	first, err := c.Rate(ctx, "USD", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	clk.add(4*time.Minute + 59*time.Second)
	again, _ := c.Rate(ctx, "USD", "EUR")
	if src.calls.Load() != 1 || !again.AsOf.Equal(first.AsOf) || !again.Mid.Equal(first.Mid) {
		t.Fatalf("within the TTL: %d calls, %v vs %v", src.calls.Load(), again.AsOf, first.AsOf)
	}
	if _, err := c.Rate(ctx, "EUR", "USD"); err != nil || src.calls.Load() != 2 {
		t.Fatalf("each pair is cached on its own: %d calls", src.calls.Load())
	}
	clk.add(time.Second) // exactly 5 minutes after the first fetch
	fresh, _ := c.Rate(ctx, "USD", "EUR")
	if src.calls.Load() != 3 || !fresh.AsOf.After(first.AsOf) {
		t.Fatalf("after the TTL: %d calls, asOf %v (first %v)", src.calls.Load(), fresh.AsOf, first.AsOf)
	}
	// A clock that goes backwards does not extend an entry forever.
	clk.add(-time.Hour)
	if _, err := c.Rate(ctx, "USD", "EUR"); err != nil || src.calls.Load() != 4 {
		t.Fatalf("clock went back: %d calls", src.calls.Load())
	}
}

// Errors are not cached: the next call asks the source again.
func TestCacheDoesNotKeepErrors(t *testing.T) {
	clk := newClock()
	src := &countingSource{inner: NewSandbox(clk.now)}
	c := NewCache(src, time.Minute, clk.now)
	src.fail.Store(true)
	if _, err := c.Rate(context.Background(), "USD", "EUR"); err == nil {
		t.Fatal("want the source's error")
	}
	src.fail.Store(false)
	if _, err := c.Rate(context.Background(), "USD", "EUR"); err != nil || src.calls.Load() != 2 {
		t.Fatalf("after recovery: %v, %d calls", err, src.calls.Load())
	}
}

// Concurrent misses on one pair make one source call; concurrent use of
// many pairs is race-free (run with -race).
func TestCacheConcurrent(t *testing.T) {
	clk := newClock()
	src := &countingSource{inner: NewSandbox(clk.now), gate: make(chan struct{})}
	c := NewCache(src, 0, clk.now)
	var wg sync.WaitGroup
	results := make([]Quote, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, err := c.Rate(context.Background(), "USD", "MXN")
			if err != nil {
				t.Error(err)
			}
			results[i] = q
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(src.gate)
	wg.Wait()
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("%d source calls for one pair, want 1", n)
	}
	for _, q := range results {
		if !q.Mid.Equal(results[0].Mid) || !q.AsOf.Equal(results[0].AsOf) {
			t.Fatalf("callers saw different quotes: %+v vs %+v", q, results[0])
		}
	}

	codes := currency.Codes()
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				from, to := codes[(g+i)%len(codes)], codes[(g*7+i)%len(codes)]
				if _, err := c.Rate(context.Background(), from, to); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					clk.add(time.Minute)
				}
			}
		}()
	}
	wg.Wait()
}

// A waiter whose leader gave up (cancelled context) fetches on its own.
func TestCacheWaiterOutlivesCancelledLeader(t *testing.T) {
	clk := newClock()
	src := &countingSource{inner: NewSandbox(clk.now), gate: make(chan struct{})}
	c := NewCache(src, 0, clk.now)
	leaderCtx, cancel := context.WithCancel(context.Background())
	leaderDone := make(chan error, 1)
	go func() { _, err := c.Rate(leaderCtx, "USD", "GBP"); leaderDone <- err }()
	for src.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	waiterDone := make(chan error, 1)
	go func() { _, err := c.Rate(context.Background(), "USD", "GBP"); waiterDone <- err }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	close(src.gate)
	if err := <-waiterDone; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}
