package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// fakeHandoff grants what grant says and records what it is given.
type fakeHandoff struct {
	grant func(store.Tenant) bool

	mu                  sync.Mutex
	reserved            int
	delivered, released []store.Claim
	deliverCalls        int
}

func (f *fakeHandoff) Reserve(t store.Tenant) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.grant != nil && !f.grant(t) {
		return false
	}
	f.reserved++
	return true
}

func (f *fakeHandoff) Deliver(cs []store.Claim) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliverCalls++
	f.delivered = append(f.delivered, cs...)
}

func (f *fakeHandoff) Release(cs []store.Claim) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, cs...)
}

func (f *fakeHandoff) LeaseToken() string { return id.New("Lease") }

func (f *fakeHandoff) counts() (reserved, delivered, released int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reserved, len(f.delivered), len(f.released)
}

// A granted delivery is written leased to the worker, as a claim would
// leave it, and handed over only once its transaction has committed.
func TestHandoff_GrantedDeliveryLeasedAndHandedAfterCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{}
		defer db.SetHandoff(h, time.Minute)()
		e := queued(1)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.QueueEvent(e); err != nil {
				return err
			}
			if !hasEventAndDelivery(t, tx.Q, e.ID) { // the read writes the outbox
				t.Error("event not readable in its transaction")
			}
			if _, d, _ := h.counts(); d != 0 {
				t.Error("handed over before the commit")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r, d, rel := h.counts(); r != 1 || d != 1 || rel != 0 {
			t.Fatalf("reserved %d, delivered %d, released %d; want 1, 1, 0", r, d, rel)
		}
		c := h.delivered[0]
		if c.EventID != e.ID || c.Event.ID != e.ID || string(c.Event.Envelope) != string(e.Envelope) || c.Attempts != 1 ||
			c.LeaseToken == "" || c.LeaseUntil == nil {
			t.Fatalf("claim %+v", c)
		}
		d, err := db.Read().GetDelivery(ctx, outboxTenant, e.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		if d.State != store.DeliveryPending || d.Attempts != 1 || d.LeaseToken != c.LeaseToken || d.LeaseUntil == nil ||
			!d.LeaseUntil.Equal(*c.LeaseUntil) {
			t.Fatalf("row %+v, claim %+v", d, c.Delivery)
		}
		// Leased: no claim takes it while the lease holds.
		got, err := db.ClaimDeliveries(ctx, "other", time.Minute, 10, 10)
		if err != nil || len(got) != 0 {
			t.Fatalf("claimed %d handed-over deliveries (%v)", len(got), err)
		}
	})
}

// A refused delivery goes in unleased, for a claim; after the commit the
// handoff is told (Deliver with none), so that it claims it then, not
// before the row exists.
func TestHandoff_RefusedDeliveryWaitsForAClaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{grant: func(store.Tenant) bool { return false }}
		defer db.SetHandoff(h, time.Minute)()
		e := queued(1)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.QueueEvent(e); err != nil {
				return err
			}
			hasEventAndDelivery(t, tx.Q, e.ID) // written, so refused
			if h.deliverCalls != 0 {
				t.Error("told of a refusal before the commit")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if r, d, rel := h.counts(); r != 0 || d != 0 || rel != 0 || h.deliverCalls != 1 {
			t.Fatalf("reserved %d, delivered %d, released %d, Deliver calls %d (want 1)", r, d, rel, h.deliverCalls)
		}
		got, err := db.ClaimDeliveries(ctx, "tok", time.Minute, 10, 10)
		if err != nil || len(got) != 1 || got[0].EventID != e.ID || got[0].Attempts != 1 {
			t.Fatalf("claim %+v %v", got, err)
		}
	})
}

// A transaction that does not commit gives its reservations back, and its
// rows are gone.
func TestHandoff_RollbackReleases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{}
		defer db.SetHandoff(h, time.Minute)()
		e := queued(1)
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.QueueEvent(e); err != nil {
				return err
			}
			hasEventAndDelivery(t, tx.Q, e.ID) // written, so reserved
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if r, d, rel := h.counts(); r != 1 || d != 0 || rel != 1 || h.deliverCalls != 0 {
			t.Fatalf("reserved %d, delivered %d, released %d, Deliver calls %d; want 1, 0, 1, 0", r, d, rel, h.deliverCalls)
		}
		if hasEventAndDelivery(t, db.Read(), e.ID) {
			t.Fatal("rolled-back event written")
		}
	})
}

// In a group commit a caller that fails gives back its own reservations;
// the others' are handed over after the shared commit.
func TestHandoff_GroupCommitSettlesPerCaller(t *testing.T) {
	storetest.EachWith(t, store.Options{BatchWorkers: 2}, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{}
		defer db.SetHandoff(h, time.Minute)()
		const n = 30
		boom := errors.New("boom")
		ok := map[string]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				e := queued(i)
				err := db.InBatchTx(ctx, func(tx *store.Tx) error {
					if err := tx.QueueEvent(e); err != nil {
						return err
					}
					hasEventAndDelivery(t, tx.Q, e.ID) // reserve now, inside the caller's savepoint
					time.Sleep(time.Millisecond)
					if i%3 == 0 {
						return boom
					}
					return nil
				})
				if (err == nil) != (i%3 != 0) {
					t.Errorf("caller %d: %v", i, err)
				}
				mu.Lock()
				ok[e.ID] = err == nil
				mu.Unlock()
			})
		}
		wg.Wait()
		r, d, rel := h.counts()
		if r != n || d != 2*n/3 || rel != n/3 {
			t.Fatalf("reserved %d, delivered %d, released %d; want %d, %d, %d", r, d, rel, n, 2*n/3, n/3)
		}
		for _, c := range h.delivered {
			if !ok[c.EventID] {
				t.Fatalf("handed over %s of a failed caller", c.EventID)
			}
		}
		for _, c := range h.released {
			if ok[c.EventID] {
				t.Fatalf("released %s of a caller that committed", c.EventID)
			}
		}
	})
}

// One handoff at a time: a second registration is ignored until the first
// is cleared.
func TestHandoff_OneRegistration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		first, second := &fakeHandoff{}, &fakeHandoff{}
		clearFirst := db.SetHandoff(first, time.Minute)
		clearSecond := db.SetHandoff(second, time.Minute)
		emitOne := func() {
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.QueueEvent(queued(1)) }); err != nil {
				t.Fatal(err)
			}
		}
		emitOne()
		clearSecond() // not registered: no effect
		emitOne()
		clearFirst()
		emitOne()
		if r, _, _ := first.counts(); r != 2 {
			t.Fatalf("first handoff reserved %d, want 2", r)
		}
		if r, _, _ := second.counts(); r != 0 {
			t.Fatalf("second handoff reserved %d, want 0", r)
		}
	})
}

// A hand-over that never started gives its lease back, uncounted, while its
// token still holds the row; a claim then takes it at once.
func TestHandoff_ReleaseLeases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{}
		clearH := db.SetHandoff(h, time.Hour)
		kept, released := queued(1), queued(2)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.QueueEvent(kept); err != nil {
				return err
			}
			return tx.QueueEvent(released)
		}); err != nil {
			t.Fatal(err)
		}
		clearH()
		if len(h.delivered) != 2 {
			t.Fatalf("%d handed over", len(h.delivered))
		}
		stale := h.delivered[0] // kept's claim, with a token that no longer holds it
		stale.LeaseToken = "someone-else"
		if err := db.Write().ReleaseLeases(ctx, []store.Claim{stale, h.delivered[1]}); err != nil {
			t.Fatal(err)
		}
		if d, _ := db.Read().GetDelivery(ctx, outboxTenant, kept.ID, false); d.LeaseUntil == nil || d.Attempts != 1 {
			t.Fatalf("released with a token that did not hold it: %+v", d)
		}
		d, _ := db.Read().GetDelivery(ctx, outboxTenant, released.ID, false)
		if d.LeaseUntil != nil || d.LeaseToken != "" || d.Attempts != 0 || d.State != store.DeliveryPending {
			t.Fatalf("not released: %+v", d)
		}
		got, err := db.ClaimDeliveries(ctx, "next", time.Minute, 10, 10)
		if err != nil || len(got) != 1 || got[0].EventID != released.ID || got[0].Attempts != 1 {
			t.Fatalf("claim %+v %v", got, err)
		}
	})
}

// A restarted node takes back its predecessor's leases by their token's
// prefix, compared as text (no pattern characters), and no one else's.
func TestHandoff_ReleaseLeasesOf(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var es []store.Event
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := range 3 {
				es = append(es, queued(i))
				if err := tx.QueueEvent(es[i]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, token := range []string{"a_b%|dead", "aXbY|other", "a_b%|dead2"} {
			if err := db.Write().LeaseDelivery(ctx, outboxTenant, es[i].ID, token, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		n, err := db.Write().ReleaseLeasesOf(ctx, "a_b%|")
		if err != nil || n != 2 {
			t.Fatalf("released %d (%v), want 2", n, err)
		}
		for i, want := range []bool{false, true, false} {
			d, err := db.Read().GetDelivery(ctx, outboxTenant, es[i].ID, false)
			if err != nil {
				t.Fatal(err)
			}
			if (d.LeaseUntil != nil) != want || d.Attempts != 1 {
				t.Fatalf("event %d: leased %v, want %v (attempts %d stay counted)", i, d.LeaseUntil != nil, want, d.Attempts)
			}
		}
		if _, err := db.Write().ReleaseLeasesOf(ctx, ""); err == nil {
			t.Fatal("an empty prefix would release every lease")
		}
	})
}
