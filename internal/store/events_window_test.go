package store_test

import (
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// GET /events' time filters read the id range of their window (id.Window):
// the window's events, its bounds inclusive, are listed with an exact
// totalCount on every page — events whose ids are stamped with their
// created_at (id.At, as events.Emit makes them) and events of older releases
// whose ids were made a little before it — and a row whose id stands outside
// the window by more than id.WindowSlack is not read at all.
func TestListEvents_TimeWindowReadsItsIDRange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, true).ID, Env: store.EnvSandbox}
		base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		at := func(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }
		var rows []store.Event
		for k := range 10 {
			e := eventRow(tn, "OUTGOING_PAYMENT.COMPLETED", "Transaction:w", at(k))
			e.ID = id.At(id.Event, e.CreatedAt)
			rows = append(rows, e)
		}
		older := eventRow(tn, "INCOMING_PAYMENT.COMPLETED", "Transaction:w", at(2))
		older.ID = id.At(id.Event, older.CreatedAt.Add(-300*time.Microsecond)) // New, just before the clock read
		forged := eventRow(tn, "INCOMING_PAYMENT.COMPLETED", "Transaction:w", at(3))
		forged.ID = id.At(id.Event, at(8)) // breaks what the window relies on
		commitEvents(t, db, append(rows, older, forged)...)
		from, to := at(2), at(5)
		cases := []struct {
			f    store.EventFilter
			want int
		}{
			{store.EventFilter{CreatedAfter: &from, CreatedBefore: &to}, 5}, // minutes 2..5 and the older release's; not the forged
			{store.EventFilter{CreatedAfter: &from}, 10},                    // 2..9, the older one and the forged (its id is in range)
			{store.EventFilter{CreatedBefore: &to}, 7},                      // 0..5 and the older one; not the forged
			{store.EventFilter{CreatedAfter: &from, Type: "INCOMING_PAYMENT.COMPLETED"}, 2},
			{store.EventFilter{CreatedAfter: &from, CreatedBefore: &to, ResourceID: "Transaction:w"}, 5},
			{store.EventFilter{}, 12},
		}
		for _, c := range cases {
			if got := listAllEvents(t, db, tn, c.f); got != c.want {
				t.Errorf("filter %+v: %d events, want %d", c.f, got, c.want)
			}
		}
	})
}
