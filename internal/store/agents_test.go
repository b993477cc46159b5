package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func mustAgent(t *testing.T, db *store.DB) (store.Tenant, store.Agent) {
	t.Helper()
	p := mustPlatform(t, db, false)
	tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	now := db.Now().UTC().Truncate(time.Microsecond)
	c := store.Customer{ID: id.New(id.Customer), Tenant: tn, PlatformCustomerID: "c1", Type: "INDIVIDUAL", Status: "ACTIVE",
		Region: "US", Profile: []byte("{}"), CreatedAt: now, UpdatedAt: now}
	a := store.Agent{ID: id.New(id.Agent), Tenant: tn, CustomerID: c.ID, Name: "a", Policy: []byte("{}"), CreatedAt: now, UpdatedAt: now}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertCustomer(ctx, c); err != nil {
			return err
		}
		return tx.InsertAgent(ctx, a)
	}); err != nil {
		t.Fatal(err)
	}
	return tn, a
}

// AddAgentUsage under concurrency, on both engines: the day's rows never
// pass the limit however many transactions add at once, and a refused add
// changes nothing.
func TestAgentUsage_ConcurrentAddsNeverPassTheLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, a := mustAgent(t, db)
		const n, amount, limit = 24, 7, 50
		var wg sync.WaitGroup
		var mu sync.Mutex
		added := 0
		for range n {
			wg.Go(func() {
				var ok bool
				err := db.InTx(ctx, func(tx *store.Tx) error {
					var err error
					if ok, err = tx.AddAgentUsage(ctx, a.ID, "D:2026-11-26", amount, limit, -1); err != nil || !ok {
						return err
					}
					ok, err = tx.AddAgentUsage(ctx, a.ID, "M:2026-11", amount, -1, -1)
					return err
				})
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					added++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		day, err := db.Read().GetAgentUsage(ctx, a.ID, "D:2026-11-26")
		if err != nil {
			t.Fatal(err)
		}
		if added != limit/amount || day.Spent != int64(added*amount) || day.Count != int64(added) {
			t.Fatalf("added %d, day %+v (limit %d)", added, day, limit)
		}
		month, _ := db.Read().GetAgentUsage(ctx, a.ID, "M:2026-11")
		if month.Spent != day.Spent {
			t.Fatalf("month %+v, day %+v", month, day)
		}
		// A count limit refuses the next transaction whatever its amount.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			ok, err := tx.AddAgentUsage(ctx, a.ID, "D:2026-11-26", 0, -1, int64(added))
			if ok {
				t.Error("count limit passed")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// Actions list in both orders with an inclusive date range, and the due
// ones are found for expiry.
func TestAgentActions_ListAndDue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, a := mustAgent(t, db)
		base := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		var ids []string
		for i := range 3 {
			at := base.Add(time.Duration(i) * time.Minute)
			exp := at.Add(5 * time.Minute)
			act := store.AgentAction{ID: id.New(id.AgentAction), Tenant: tn, AgentID: a.ID, CustomerID: a.CustomerID,
				Type: "EXECUTE_QUOTE", Status: "PENDING_APPROVAL", NeedsApproval: true, ExpiresAt: &exp, CreatedAt: at, UpdatedAt: at}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertAgentAction(ctx, act) }); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, act.ID)
		}
		from, to := base.Add(time.Minute), base.Add(2*time.Minute)
		rows, total, err := db.Read().ListAgentActions(ctx, tn, store.AgentActionFilter{Approvals: true, From: &from, To: &to, Desc: true}, "", 10)
		if err != nil || total != 2 || len(rows) != 2 || rows[0].ID != ids[2] || rows[1].ID != ids[1] {
			t.Fatalf("list: %v total %d %v", rows, total, err)
		}
		rows, _, _ = db.Read().ListAgentActions(ctx, tn, store.AgentActionFilter{AgentID: a.ID}, ids[0], 10)
		if len(rows) != 2 || rows[0].ID != ids[1] {
			t.Fatalf("after cursor: %v", rows)
		}
		due, err := db.Read().DueAgentActions(ctx, base.Add(6*time.Minute), 10)
		if err != nil || len(due) != 2 {
			t.Fatalf("due: %d %v", len(due), err)
		}
	})
}
