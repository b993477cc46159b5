package webhooks

import (
	"maps"
	"slices"
	"sync"

	"github.com/paymentsd/paymentsd/internal/store"
)

// handoffQueueFactor bounds the deliveries handed over and waiting for a
// worker, per tenant, as a multiple of the per-tenant cap. Beyond it events
// go to the queue in the database, which claims serve.
const handoffQueueFactor = 4

// workers counts one runner's delivery workers and holds the deliveries
// handed over by commits (store.Handoff) until a worker is free. A tenant
// never has more than perTenant attempts in flight on this node, claimed or
// handed over (claims also count its leases in the database, which cover
// other nodes and the handed-over deliveries waiting here).
type workers struct {
	mu        sync.Mutex
	max       int
	perTenant int
	busy      int
	byTenant  map[store.Tenant]int // attempts in flight
	// Handed over: reserved by transactions not yet committed (promised),
	// then waiting for a worker (queued), tenants taken in turn (turn).
	promised map[store.Tenant]int
	queued   map[store.Tenant][]store.Claim
	turn     []store.Tenant
	// backlog: deliveries may wait in the database's queue, because a
	// tenant's queue here was full (overflow) or because this runner has
	// not yet seen the database's queue empty (a node that starts may find
	// a backlog, left by a crash or by a stopped node). Then claims fill
	// this queue from the database whenever it runs low, until a claim
	// finds nothing waiting. Hand-overs go on meanwhile, as far as the queue
	// has room: new events go out at once and the backlog with the capacity
	// they leave, rather than everything waiting behind the backlog.
	backlog bool
	open    bool // handoffs accepted (the runner is running)
	// rowless counts, per tenant, the hand-overs waiting or in flight that
	// have no delivery rows (store.Claim.Journal), which claims cannot see
	// in the database (store.ClaimRequest.Handed).
	rowless map[store.Tenant]int
}

func newWorkers(max, perTenant int) *workers {
	return &workers{max: max, perTenant: perTenant, byTenant: map[store.Tenant]int{},
		promised: map[store.Tenant]int{}, queued: map[store.Tenant][]store.Claim{}, rowless: map[store.Tenant]int{}}
}

// reserve accepts one delivery of t for handoff if t's queue here has room.
func (w *workers) reserve(t store.Tenant) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open {
		return false
	}
	if w.promised[t]+len(w.queued[t]) >= handoffQueueFactor*w.perTenant {
		w.backlog = true
		return false
	}
	w.promised[t]++
	return true
}

// handed moves committed reservations to the queue; they are dropped if
// the runner has stopped (their leases expire and claims take them).
func (w *workers) handed(cs []store.Claim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cs {
		w.unpromise(c.Tenant)
		w.enqueue(c)
	}
}

// enqueue queues a leased delivery for a worker, its tenant at the back of
// the turn if it had none waiting; nothing while the runner is stopped.
func (w *workers) enqueue(c store.Claim) {
	if !w.open {
		return
	}
	if len(w.queued[c.Tenant]) == 0 {
		w.turn = append(w.turn, c.Tenant)
	}
	w.queued[c.Tenant] = append(w.queued[c.Tenant], c)
	if c.Journal != "" {
		w.rowless[c.Tenant]++
	}
}

// released forgets reservations whose transaction did not commit.
func (w *workers) released(cs []store.Claim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cs {
		w.unpromise(c.Tenant)
	}
}

func (w *workers) unpromise(t store.Tenant) { decrement(w.promised, t) }

// decrement counts one fewer of k in m, keeping only keys still counted.
func decrement[K comparable](m map[K]int, k K) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

// next takes a queued delivery for a free worker: tenants in turn, none
// past its cap.
func (w *workers) next() (store.Claim, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy >= w.max {
		return store.Claim{}, false
	}
	for i, t := range w.turn {
		if w.byTenant[t] >= w.perTenant {
			continue
		}
		q := w.queued[t]
		c := q[0]
		if len(q) == 1 {
			delete(w.queued, t)
			w.turn = slices.Delete(w.turn, i, i+1)
		} else {
			w.queued[t] = q[1:]
			// To the back of the turn.
			w.turn = append(slices.Delete(w.turn, i, i+1), t)
		}
		w.busy++
		w.byTenant[t]++
		return c, true
	}
	return store.Claim{}, false
}

// takeFree promises every free worker to a claim about to be made.
func (w *workers) takeFree() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.max - w.busy
	w.busy = w.max
	return n
}

// claimed settles a claim that was promised took workers: one per claim
// stays busy, the rest are free again. A claim that found the queue empty
// ends the backlog.
func (w *workers) claimed(cs []store.Claim, took int, drained bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy -= took - len(cs)
	for _, c := range cs {
		w.byTenant[c.Tenant]++
	}
	w.settleDrained(drained)
}

// claimedToQueue settles a claim made to fill the queue (see
// Runner.dispatch): every worker it took is free again and what it leased
// waits in the queue, as hand-overs do, for next.
func (w *workers) claimedToQueue(cs []store.Claim, took int, drained bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy -= took
	for _, c := range cs {
		w.enqueue(c)
	}
	w.settleDrained(drained)
}

func (w *workers) settleDrained(drained bool) {
	if drained {
		w.backlog = false
	}
}

// done frees the worker of one delivery.
func (w *workers) done(c store.Claim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy--
	decrement(w.byTenant, c.Tenant)
	if c.Journal != "" {
		decrement(w.rowless, c.Tenant)
	}
}

// rowlessHeld copies rowless, for a claim to count (nil when none).
func (w *workers) rowlessHeld() map[store.Tenant]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rowless) == 0 {
		return nil
	}
	return maps.Clone(w.rowless)
}

// backlogged says whether some deliveries may wait in the database's
// queue (see backlog).
func (w *workers) backlogged() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.backlog
}

// queuedRunnable is how many deliveries wait here for a worker whose
// tenants are below their cap (a hanging receiver's queue does not count:
// other tenants' work must still be claimed).
func (w *workers) queuedRunnable() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for t, q := range w.queued {
		if w.byTenant[t] < w.perTenant {
			n += len(q)
		}
	}
	return n
}

func (w *workers) hasFree() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.busy < w.max
}

func (w *workers) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.busy == 0
}

// setOpen opens or closes the runner to hand-overs; closing returns the
// handed-over deliveries that had not started.
func (w *workers) setOpen(open bool) (dropped []store.Claim) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = open
	if open {
		w.backlog = true
	} else {
		for _, t := range w.turn {
			dropped = append(dropped, w.queued[t]...)
		}
		for _, c := range dropped {
			if c.Journal != "" {
				decrement(w.rowless, c.Tenant)
			}
		}
		clear(w.queued)
		w.turn = nil
	}
	return dropped
}
