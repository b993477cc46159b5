package store_test

import (
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// commitEvents queues es in one database transaction and commits it.
func commitEvents(t *testing.T, db *store.DB, es ...store.Event) {
	t.Helper()
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, e := range es {
			if err := tx.QueueEvent(e); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// handOver commits es through h and returns their claims.
func handOver(t *testing.T, db *store.DB, h *fakeHandoff, es ...store.Event) []store.Claim {
	t.Helper()
	before := len(h.delivered)
	commitEvents(t, db, es...)
	if len(h.delivered)-before != len(es) {
		t.Fatalf("%d of %d handed over", len(h.delivered)-before, len(es))
	}
	return h.delivered[before:]
}

func countRows(t *testing.T, db *store.DB, query string) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRowForTest(ctx, query, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A delivery handed over at its commit has no row: one journal row names
// the commit's hand-overs, and the delivery reads back as the row it would
// have been (leased, its attempt counted). Its first outcome writes its row,
// with the attempt as its last; the batch that writes the journal's last
// outcome deletes the journal row.
func TestHandoffJournal_RowWrittenWithTheFirstOutcome(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{}
		defer db.SetHandoff(h, time.Minute)()
		cs := handOver(t, db, h, queued(1), queued(2))
		if n := countRows(t, db, `SELECT COUNT(*) FROM webhook_deliveries`); n != 0 {
			t.Fatalf("%d delivery rows written at the commit, want 0", n)
		}
		if n := countRows(t, db, `SELECT COUNT(*) FROM webhook_handoffs`); n != 1 {
			t.Fatalf("%d journal rows, want 1", n)
		}
		if cs[0].Journal == "" || cs[0].Journal != cs[1].Journal {
			t.Fatalf("claims' journals %q, %q", cs[0].Journal, cs[1].Journal)
		}
		d, err := db.Read().GetDelivery(ctx, outboxTenant, cs[1].EventID, false)
		if err != nil || d.State != store.DeliveryPending || d.Attempts != 1 || d.LeaseToken != cs[1].LeaseToken ||
			d.LeaseUntil == nil || d.LeaseUntil.Before(*cs[1].LeaseUntil) || d.Journal != cs[1].Journal {
			t.Fatalf("read back %+v (%v), claim %+v", d, err, cs[1].Delivery)
		}
		ed, err := db.Read().GetEventWithDelivery(ctx, outboxTenant, cs[0].EventID)
		if err != nil || ed.Delivery == nil || ed.Delivery.LeaseUntil == nil || ed.Delivery.Attempts != 1 {
			t.Fatalf("event with delivery %+v (%v)", ed.Delivery, err)
		}
		if got, err := db.ClaimDeliveries(ctx, "other", time.Minute, 10, 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed %d handed-over deliveries (%v)", len(got), err)
		}

		finish := func(c store.Claim, state string) bool {
			t.Helper()
			now := time.Now().UTC().Truncate(time.Microsecond)
			a := store.Attempt{ID: id.New("WebhookAttempt"), EventID: c.EventID, Tenant: c.Tenant, AttemptedAt: now,
				URL: "https://receiver.example/hook", StatusCode: 200, LatencyMS: 3, ResponseExcerpt: "ok"}
			o := store.DeliveryOutcome{State: state, DeliveredAt: &now}
			if state == store.DeliveryPending {
				o = store.DeliveryOutcome{State: state, NextAttemptAt: now.Add(time.Minute)}
			}
			held, err := db.Write().FinishDeliveries(ctx, []store.Finish{{EventID: c.EventID, Token: c.LeaseToken,
				Outcome: o, Attempt: &a, Handed: &c.Delivery}})
			if err != nil {
				t.Fatal(err)
			}
			return held[0]
		}
		if !finish(cs[0], store.DeliveryDelivered) {
			t.Fatal("first outcome of a hand-over not held")
		}
		if err := db.Write().EndHandoffs(ctx, nil); err != nil {
			t.Fatal(err)
		}
		d, err = db.Read().GetDelivery(ctx, outboxTenant, cs[0].EventID, false)
		if err != nil || d.State != store.DeliveryDelivered || d.Attempts != 1 || d.LeaseUntil != nil || d.Journal != "" ||
			d.DeliveredAt == nil || !d.WindowStart.Equal(cs[0].WindowStart) {
			t.Fatalf("after its outcome %+v (%v)", d, err)
		}
		as, err := db.Read().ListAttempts(ctx, outboxTenant, cs[0].EventID, 10)
		if err != nil || len(as) != 1 || as[0].StatusCode != 200 || as[0].URL != "https://receiver.example/hook" {
			t.Fatalf("attempts %+v (%v)", as, err)
		}
		// A retry's outcome makes a due row that a claim takes when due.
		if !finish(cs[1], store.DeliveryPending) {
			t.Fatal("second outcome not held")
		}
		if err := db.Write().EndHandoffs(ctx, []string{cs[1].Journal}); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, db, `SELECT COUNT(*) FROM webhook_handoffs`); n != 0 {
			t.Fatalf("%d journal rows after the last outcome", n)
		}
		d, err = db.Read().GetDelivery(ctx, outboxTenant, cs[1].EventID, false)
		if err != nil || d.State != store.DeliveryPending || d.LeaseUntil != nil || d.Attempts != 1 {
			t.Fatalf("retry row %+v (%v)", d, err)
		}
	})
}

// A journal row whose lease ran out (the node died, or never wrote the
// outcome) gives each of its events still without a row a due delivery at
// the next claim, the hand-over's attempt counted; an outcome that comes
// after that finds its lease lost: the attempt is kept, the outcome not.
func TestHandoffJournal_ExpiredJournalBecomesDue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &fakeHandoff{}
		clearH := db.SetHandoff(h, time.Minute)
		cs := handOver(t, db, h, queued(1), queued(2))
		clearH()
		now := time.Now().UTC().Truncate(time.Microsecond)
		// cs[0]'s outcome is written in time; cs[1]'s is not.
		held, err := db.Write().FinishDeliveries(ctx, []store.Finish{{EventID: cs[0].EventID, Token: cs[0].LeaseToken,
			Outcome: store.DeliveryOutcome{State: store.DeliveryDelivered, DeliveredAt: &now}, Handed: &cs[0].Delivery}})
		if err != nil || !held[0] {
			t.Fatalf("held %v (%v)", held, err)
		}
		if got, err := db.ClaimDeliveries(ctx, "early", time.Minute, 10, 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed %d before the journal's lease ended (%v)", len(got), err)
		}
		db.SetClock(func() time.Time { return time.Now().Add(2 * time.Minute) }) // the journal's lease is over
		defer db.SetClock(time.Now)
		got, err := db.ClaimDeliveries(ctx, "late", time.Minute, 10, 10)
		if err != nil || len(got) != 1 || got[0].EventID != cs[1].EventID || got[0].Attempts != 2 || got[0].Journal != "" ||
			string(got[0].Event.Envelope) != string(cs[1].Event.Envelope) {
			t.Fatalf("claim after the journal's lease %+v (%v)", got, err)
		}
		if n := countRows(t, db, `SELECT COUNT(*) FROM webhook_handoffs`); n != 0 {
			t.Fatalf("%d journal rows after the sweep", n)
		}
		if d, _ := db.Read().GetDelivery(ctx, outboxTenant, cs[0].EventID, false); d.State != store.DeliveryDelivered {
			t.Fatalf("the delivered event's row %+v", d)
		}
		a := store.Attempt{ID: id.New("WebhookAttempt"), EventID: cs[1].EventID, Tenant: cs[1].Tenant, AttemptedAt: now,
			URL: "https://receiver.example/hook", StatusCode: 200, ResponseExcerpt: "late"}
		held, err = db.Write().FinishDeliveries(ctx, []store.Finish{{EventID: cs[1].EventID, Token: cs[1].LeaseToken,
			Outcome: store.DeliveryOutcome{State: store.DeliveryDelivered, DeliveredAt: &now}, Attempt: &a,
			Handed: &cs[1].Delivery}})
		if err != nil || held[0] {
			t.Fatalf("a late outcome held %v (%v)", held, err)
		}
		d, _ := db.Read().GetDelivery(ctx, outboxTenant, cs[1].EventID, false)
		if d.State != store.DeliveryPending || d.LeaseToken != "late" {
			t.Fatalf("the late outcome changed the claimed row: %+v", d)
		}
		if as, err := db.Read().ListAttempts(ctx, outboxTenant, cs[1].EventID, 10); err != nil || len(as) != 1 ||
			as[0].ResponseExcerpt != "late" {
			t.Fatalf("the late attempt %+v (%v)", as, err)
		}
	})
}

// A restarted node ends its predecessor's journal leases by their token's
// prefix, so a claim gives their events rows at once; a released hand-over
// (a stopping runner's, never started) gets a due row, its attempt
// uncounted.
func TestHandoffJournal_RestartAndRelease(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := &prefixedHandoff{prefix: "node-a|"}
		clearH := db.SetHandoff(h, time.Hour)
		cs := handOver(t, db, &h.fakeHandoff, queued(1), queued(2))
		clearH()
		if err := db.Write().ReleaseLeases(ctx, cs[1:]); err != nil {
			t.Fatal(err)
		}
		d, _ := db.Read().GetDelivery(ctx, outboxTenant, cs[1].EventID, false)
		if d.State != store.DeliveryPending || d.LeaseUntil != nil || d.Attempts != 0 || d.Journal != "" {
			t.Fatalf("released %+v", d)
		}
		if n, err := db.Write().ReleaseLeasesOf(ctx, "node-b|"); err != nil || n != 0 {
			t.Fatalf("another node's prefix released %d (%v)", n, err)
		}
		if n, err := db.Write().ReleaseLeasesOf(ctx, "node-a|"); err != nil || n != 1 {
			t.Fatalf("released %d (%v), want the journal row", n, err)
		}
		got, err := db.ClaimDeliveries(ctx, "next", time.Minute, 10, 10)
		if err != nil || len(got) != 2 {
			t.Fatalf("claimed %+v (%v), want both", got, err)
		}
	})
}

// A claim counts the caller's hand-overs without rows (ClaimRequest.Handed)
// against their tenants' caps, as it counts leased rows.
func TestHandoffJournal_ClaimCountsHandedAgainstTheCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.QueueEvent(queued(1)) }); err != nil {
			t.Fatal(err)
		}
		res, err := db.ClaimBatch(ctx, store.ClaimRequest{Token: "t", Lease: time.Minute, Limit: 10, PerTenant: 2,
			Handed: map[store.Tenant]int{outboxTenant: 2}})
		if err != nil || len(res.Claims) != 0 {
			t.Fatalf("claimed %d past the cap (%v)", len(res.Claims), err)
		}
		res, err = db.ClaimBatch(ctx, store.ClaimRequest{Token: "t", Lease: time.Minute, Limit: 10, PerTenant: 2,
			Handed: map[store.Tenant]int{outboxTenant: 1}})
		if err != nil || len(res.Claims) != 1 {
			t.Fatalf("claimed %d below the cap (%v)", len(res.Claims), err)
		}
	})
}

// prefixedHandoff makes lease tokens that begin with prefix, as a runner
// with a node id does.
type prefixedHandoff struct {
	fakeHandoff
	prefix string
}

func (p *prefixedHandoff) LeaseToken() string { return p.prefix + id.New("Lease") }
