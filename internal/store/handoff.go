package store

import "time"

// Handoff lets the node that commits an event deliver it at once, without
// claiming it. A claim is a transaction of its own that reads the queue,
// locks rows and leases them: under load on PostgreSQL its queue read alone
// took nearly as much server time as a transfer's inserts, and on SQLite
// every claim was a commit of the one writer. The webhook runner registers itself
// (SetHandoff). As the outbox writes an event's delivery row it asks the
// runner to take it; a row the runner takes goes in already leased to it
// (attempts 1, as a claim leaves it), and once the transaction has committed
// the runner gets the claims. Rows it does not take go in unleased and wait
// for a claim, as before; a transaction that does not commit gives its
// reservations back. If the node dies between the commit and the attempt, the
// lease expires and a claim takes the row: at least once, as with claims.
type Handoff interface {
	// Reserve asks the runner to take one delivery of t once committed. It
	// is called inside the transaction (on SQLite, by the one writer), so it
	// must not block.
	Reserve(t Tenant) bool
	// Deliver passes the reserved deliveries whose transaction committed.
	// It is also called, with none, after a commit whose deliveries it
	// refused: they are in the queue now, for a claim to find.
	Deliver(cs []Claim)
	// Release gives back reservations whose transaction did not commit.
	Release(cs []Claim)
	// LeaseToken makes the lease token of one transaction's hand-overs.
	LeaseToken() string
}

type handoffReg struct {
	h     Handoff
	lease time.Duration
}

// SetHandoff registers h for the events of this DB's transactions, their
// deliveries leased for lease; clear unregisters it. A second registration
// while one is set is ignored (clear then does nothing), so with several
// runners on one DB the first serves the handoffs and all serve claims.
func (db *DB) SetHandoff(h Handoff, lease time.Duration) (clear func()) {
	reg := &handoffReg{h: h, lease: lease}
	if !db.handoff.CompareAndSwap(nil, reg) {
		return func() {}
	}
	return func() { db.handoff.CompareAndSwap(reg, nil) }
}

// TakingHandoffs reports whether a runner takes this DB's hand-overs now
// (SetHandoff): a runner registers a moment after it starts.
func (db *DB) TakingHandoffs() bool { return db.handoff.Load() != nil }

// handoffs collects the reservations of one write transaction.
type handoffs struct {
	reg     *handoffReg
	token   string
	claims  []Claim
	refused bool // some delivery was not taken
}

// reserve asks the handoff to take e's delivery; if it does, it returns
// the claim the row is written as.
func (hs *handoffs) reserve(e Event, now time.Time) (Claim, bool) {
	if hs == nil || hs.reg == nil {
		return Claim{}, false
	}
	if !hs.reg.h.Reserve(e.Tenant) {
		hs.refused = true
		return Claim{}, false
	}
	if hs.token == "" {
		hs.token = hs.reg.h.LeaseToken()
	}
	until := now.Add(hs.reg.lease).Truncate(time.Microsecond)
	c := Claim{Event: e, Delivery: Delivery{EventID: e.ID, Tenant: e.Tenant, State: DeliveryPending, Attempts: 1,
		WindowStart: e.CreatedAt, NextAttemptAt: e.CreatedAt, LeaseToken: hs.token, LeaseUntil: &until,
		UpdatedAt: e.CreatedAt}}
	hs.claims = append(hs.claims, c)
	return c, true
}

// take empties hs into the claims it holds.
func (hs *handoffs) take() []Claim {
	if hs == nil {
		return nil
	}
	cs := hs.claims
	hs.claims = nil
	return cs
}

// settle hands the reservations over after a commit (and tells of refused
// ones), or gives them back.
func (hs *handoffs) settle(committed bool) {
	cs, refused := hs.take(), hs.refused
	hs.refused = false
	switch {
	case committed && (len(cs) > 0 || refused):
		hs.reg.h.Deliver(cs)
	case !committed && len(cs) > 0:
		hs.reg.h.Release(cs)
	}
}

// keep adds what a group-commit caller's hand-overs hold to the batch's.
func (hs *handoffs) keep(fn *handoffs) {
	hs.claims = append(hs.claims, fn.take()...)
	hs.refused = hs.refused || fn.refused
}

func (db *DB) newHandoffs() *handoffs {
	return &handoffs{reg: db.handoff.Load()}
}
