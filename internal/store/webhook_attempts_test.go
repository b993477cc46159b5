package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// A delivery holds its last attempt inline (migration 0059); earlier ones
// are rows of webhook_attempts. These tests pin that ListAttempts shows the
// same attempts, ids and order as when every attempt was a row.

// queueOne commits one event (and its unleased delivery).
func queueOne(t *testing.T, db *store.DB, i int) store.Event {
	t.Helper()
	e := queued(i)
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.QueueEvent(e) }); err != nil {
		t.Fatal(err)
	}
	return e
}

// attemptOf makes attempt n of e, with fields that differ per attempt.
func attemptOf(e store.Event, n int) store.Attempt {
	a := store.Attempt{ID: id.New("WebhookAttempt"), EventID: e.ID, Tenant: e.Tenant,
		AttemptedAt: time.Now().UTC().Truncate(time.Microsecond).Add(time.Duration(n) * time.Second),
		URL:         fmt.Sprintf("https://hooks.example.com/%d", n), LatencyMS: int64(10 * n),
		ResponseExcerpt: fmt.Sprintf("body %d", n), PeerPublic: n%2 == 1}
	switch n % 3 {
	case 0:
		a.StatusCode = 200
	case 1:
		a.Error = "connection refused"
	case 2:
		a.StatusCode = 503
	}
	return a
}

// attemptOnce claims e's delivery as token and records a under it, with
// the outcome state (PENDING: due again at once).
func attemptOnce(t *testing.T, db *store.DB, e store.Event, token string, a store.Attempt, state string) {
	t.Helper()
	cs, err := db.ClaimDeliveries(ctx, token, time.Minute, 10, 10)
	if err != nil || len(cs) != 1 || cs[0].EventID != e.ID {
		t.Fatalf("claim: %v, %d claims", err, len(cs))
	}
	finish(t, db, e, token, a, state, true)
}

func finish(t *testing.T, db *store.DB, e store.Event, token string, a store.Attempt, state string, wantHeld bool) {
	t.Helper()
	o := store.DeliveryOutcome{State: state}
	if state == store.DeliveryDelivered {
		now := time.Now().UTC()
		o.DeliveredAt = &now
	}
	held, err := db.Write().FinishDeliveries(ctx, []store.Finish{{EventID: e.ID, Token: token, Outcome: o, Attempt: &a}})
	if err != nil || held[0] != wantHeld {
		t.Fatalf("finish %s: held %v, want %v (%v)", token, held, wantHeld, err)
	}
}

// attemptRows counts e's rows in webhook_attempts.
func attemptRows(t *testing.T, db *store.DB, e store.Event) int {
	t.Helper()
	var n int
	if err := db.Read().QueryRowForTest(ctx, "SELECT COUNT(*) FROM webhook_attempts WHERE event_id = '"+e.ID+"'", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantAttempts checks that the latest limit attempts of e are want.
func wantAttempts(t *testing.T, db *store.DB, e store.Event, limit int, want ...store.Attempt) {
	t.Helper()
	got, err := db.Read().ListAttempts(ctx, e.Tenant, e.ID, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("limit %d: attempts\n%+v\nwant\n%+v", limit, got, want)
	}
}

func TestAttempts_FirstTrySuccessWritesNoAttemptRow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queueOne(t, db, 1)
		a := attemptOf(e, 3)
		attemptOnce(t, db, e, "w1", a, store.DeliveryDelivered)
		if n := attemptRows(t, db, e); n != 0 {
			t.Fatalf("%d rows in webhook_attempts, want 0 (the attempt is the delivery's)", n)
		}
		wantAttempts(t, db, e, 1000, a)
		wantAttempts(t, db, e, 1, a)
		d, err := db.Read().GetDelivery(ctx, e.Tenant, e.ID, false)
		if err != nil || d.State != store.DeliveryDelivered || d.LeaseUntil != nil || d.DeliveredAt == nil {
			t.Fatalf("delivery %+v, %v", d, err)
		}
		other := store.Tenant{PlatformID: "Platform:other", Env: e.Tenant.Env}
		if got, err := db.Read().ListAttempts(ctx, other, e.ID, 10); err != nil || len(got) != 0 {
			t.Fatalf("another tenant sees %d attempts (%v)", len(got), err)
		}
	})
}

func TestAttempts_ThreeAttemptsInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queueOne(t, db, 1)
		var as []store.Attempt
		for n, state := range []string{store.DeliveryPending, store.DeliveryPending, store.DeliveryDelivered} {
			a := attemptOf(e, n+1)
			as = append(as, a)
			attemptOnce(t, db, e, fmt.Sprint("w", n), a, state)
			if got := attemptRows(t, db, e); got != n {
				t.Fatalf("after %d attempts, %d rows in webhook_attempts, want %d", n+1, got, n)
			}
			wantAttempts(t, db, e, 1000, as...)
		}
		wantAttempts(t, db, e, 3, as...)
		wantAttempts(t, db, e, 2, as[1:]...)
		wantAttempts(t, db, e, 1, as[2])
		// An outcome without an attempt leaves the last attempt alone.
		if err := db.Write().RestartDelivery(ctx, e.Tenant, e.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ClaimDeliveries(ctx, "w9", time.Minute, 10, 10); err != nil {
			t.Fatal(err)
		}
		if err := db.Write().FinishDelivery(ctx, e.ID, "w9", store.DeliveryOutcome{State: store.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
		wantAttempts(t, db, e, 1000, as...)
		if got := attemptRows(t, db, e); got != 2 {
			t.Fatalf("%d rows in webhook_attempts, want 2", got)
		}
	})
}

// Rows written before migration 0059 (every attempt in webhook_attempts,
// none inline) read as before, and attempts after them follow in order.
func TestAttempts_OldLayoutRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queueOne(t, db, 1)
		old := []store.Attempt{attemptOf(e, 1), attemptOf(e, 2)}
		if err := db.Write().InsertAttempts(ctx, old); err != nil {
			t.Fatal(err)
		}
		wantAttempts(t, db, e, 1000, old...)
		wantAttempts(t, db, e, 1, old[1])
		as := old
		for n, state := range []string{store.DeliveryPending, store.DeliveryDelivered} {
			a := attemptOf(e, n+3)
			as = append(as, a)
			attemptOnce(t, db, e, fmt.Sprint("w", n), a, state)
			if got := attemptRows(t, db, e); got != len(as)-1 {
				t.Fatalf("%d rows in webhook_attempts, want %d", got, len(as)-1)
			}
			wantAttempts(t, db, e, 1000, as...)
		}
		wantAttempts(t, db, e, 2, as[2:]...)
	})
}

// An attempt whose lease was lost (expired, and another worker took the
// delivery) is still recorded, once, and the holder's attempt is the last.
func TestAttempts_LostLeaseAttemptKept(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queueOne(t, db, 1)
		if cs, err := db.ClaimDeliveries(ctx, "w1", time.Millisecond, 10, 10); err != nil || len(cs) != 1 {
			t.Fatalf("claim: %v, %d", err, len(cs))
		}
		time.Sleep(20 * time.Millisecond)
		if cs, err := db.ClaimDeliveries(ctx, "w2", time.Minute, 10, 10); err != nil || len(cs) != 1 {
			t.Fatalf("claim after expiry: %v, %d", err, len(cs))
		}
		stale, current := attemptOf(e, 1), attemptOf(e, 2)
		finish(t, db, e, "w1", stale, store.DeliveryDelivered, false)
		if d, _ := db.Read().GetDelivery(ctx, e.Tenant, e.ID, false); d.State != store.DeliveryPending || d.LeaseToken != "w2" {
			t.Fatalf("a stale outcome moved the delivery: %+v", d)
		}
		wantAttempts(t, db, e, 1000, stale)
		finish(t, db, e, "w2", current, store.DeliveryDelivered, true)
		wantAttempts(t, db, e, 1000, stale, current)
		if got := attemptRows(t, db, e); got != 1 {
			t.Fatalf("%d rows in webhook_attempts, want 1", got)
		}
		finish(t, db, e, "w2", attemptOf(e, 3), store.DeliveryDelivered, false)
		if got, _ := db.Read().ListAttempts(ctx, e.Tenant, e.ID, 1000); len(got) != 3 || got[1] != current {
			t.Fatalf("attempts %+v", got)
		}
	})
}

// Purging an event removes its attempts, inline and in webhook_attempts,
// whichever layout wrote them.
func TestAttempts_PurgeRemovesBoth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tried := queueOne(t, db, 1)
		for n, state := range []string{store.DeliveryPending, store.DeliveryPending, store.DeliveryDelivered} {
			attemptOnce(t, db, tried, fmt.Sprint("w", n), attemptOf(tried, n), state)
		}
		oldLayout := queueOne(t, db, 2)
		if err := db.Write().InsertAttempts(ctx, []store.Attempt{attemptOf(oldLayout, 1)}); err != nil {
			t.Fatal(err)
		}
		attemptOnce(t, db, oldLayout, "w9", attemptOf(oldLayout, 2), store.DeliveryFailed)
		n, err := db.PurgeEvents(ctx, time.Now().Add(time.Hour), 100)
		if err != nil || n != 2 {
			t.Fatalf("purged %d events (%v), want 2", n, err)
		}
		for _, e := range []store.Event{tried, oldLayout} {
			wantAttempts(t, db, e, 1000)
			if got := attemptRows(t, db, e); got != 0 {
				t.Fatalf("%d rows in webhook_attempts left", got)
			}
			if _, err := db.Read().GetDelivery(ctx, e.Tenant, e.ID, false); err == nil {
				t.Fatal("delivery kept")
			}
		}
	})
}

// Retention finds old events by their ids (a range of the primary key) and
// checks created_at too: an event goes only when both say it is older than
// the cutoff.
func TestPurgeEvents_ByIdAndAge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		longAgo := time.Now().Add(-40 * 24 * time.Hour).UTC().Truncate(time.Microsecond)
		made := func(i int, eventID string, createdAt time.Time) store.Event {
			e := queued(i)
			e.ID, e.CreatedAt = eventID, createdAt
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.QueueEvent(e) }); err != nil {
				t.Fatal(err)
			}
			attemptOnce(t, db, e, fmt.Sprint("w", i), attemptOf(e, 1), store.DeliveryDelivered)
			return e
		}
		old := made(1, id.Floor(id.Event, longAgo), longAgo)
		newID := made(2, id.New(id.Event), longAgo)                                            // its id is not old
		newRow := made(3, id.Floor(id.Event, longAgo.Add(time.Millisecond)), time.Now().UTC()) // its row is not
		n, err := db.PurgeEvents(ctx, time.Now().Add(-30*24*time.Hour), 100)
		if err != nil || n != 1 {
			t.Fatalf("purged %d events (%v), want 1", n, err)
		}
		if _, err := db.Read().GetEvent(ctx, old.Tenant, old.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the old event: %v, want it purged", err)
		}
		for _, e := range []store.Event{newID, newRow} {
			if _, err := db.Read().GetEvent(ctx, e.Tenant, e.ID); err != nil {
				t.Fatalf("event %s: %v, want it kept", e.ID, err)
			}
		}
	})
}

// A finish that waits on a concurrent change of lease (a claim of the
// expired lease, committed while the finish waits for the row) neither
// moves nor keeps twice the attempt the delivery held: the lost attempt is
// recorded once and the held one stays where it was.
func TestAttempts_FinishRacingAReclaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queueOne(t, db, 1)
		first := attemptOf(e, 1)
		attemptOnce(t, db, e, "w0", first, store.DeliveryPending)
		if cs, err := db.ClaimDeliveries(ctx, "w1", time.Minute, 10, 10); err != nil || len(cs) != 1 {
			t.Fatalf("claim: %v, %d", err, len(cs))
		}
		locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- db.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.ExecForTest(ctx, `UPDATE webhook_deliveries SET lease_token = 'w2' WHERE event_id = ?`, e.ID); err != nil {
					return err
				}
				close(locked)
				<-release
				return nil
			})
		}()
		<-locked
		go func() { time.Sleep(200 * time.Millisecond); close(release) }()
		lost := attemptOf(e, 2)
		finish(t, db, e, "w1", lost, store.DeliveryDelivered, false)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		wantAttempts(t, db, e, 1000, first, lost)
		if got := attemptRows(t, db, e); got != 1 {
			t.Fatalf("%d rows in webhook_attempts, want 1 (the lost attempt)", got)
		}
	})
}

// Migration 0059 on a database that recorded attempts the old way: the
// columns come in empty, the old attempts read as before, and a retry of a
// delivery that was pending across the upgrade follows them.
func TestMigration0059_AttemptsBeforeIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := queueOne(t, db, 1)
		for _, c := range []string{"last_attempt_id", "last_attempted_at", "last_attempt_url", "last_attempt_status_code",
			"last_attempt_latency_ms", "last_attempt_response_excerpt", "last_attempt_error", "last_attempt_peer_public"} {
			if err := db.ExecRaw(ctx, "ALTER TABLE webhook_deliveries DROP COLUMN "+c); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.ExecRaw(ctx, "DELETE FROM schema_migrations WHERE version = 59"); err != nil {
			t.Fatal(err)
		}
		// What the old recorder wrote for a failed first attempt: a row of
		// webhook_attempts, the delivery PENDING again.
		old := attemptOf(e, 1)
		if err := db.Write().InsertAttempts(ctx, []store.Attempt{old}); err != nil {
			t.Fatal(err)
		}
		if err := db.ExecRaw(ctx, "UPDATE webhook_deliveries SET attempts = 1 WHERE event_id = ?", e.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		wantAttempts(t, db, e, 1000, old)
		retry := attemptOf(e, 2)
		attemptOnce(t, db, e, "w1", retry, store.DeliveryDelivered)
		wantAttempts(t, db, e, 1000, old, retry)
		wantAttempts(t, db, e, 1, retry)
		if got := attemptRows(t, db, e); got != 1 {
			t.Fatalf("%d rows in webhook_attempts, want 1 (the old one)", got)
		}
	})
}

// On PostgreSQL a finish never scans its rows (v) as a materialized CTE:
// joined twice, v was materialized and matched to itself in a nested loop,
// quadratic in the rows of a finish (0.55 of 1.05 ms for 40 rows). v is NOT
// MATERIALIZED since the lost attempts' query reads it too.
func TestAttempts_FinishNeverMaterializesItsRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Engine() != store.Postgres {
			t.Skip("a PostgreSQL plan")
		}
		fs := make([]store.Finish, 40)
		for i := range fs {
			e := queued(i)
			a := attemptOf(e, 1)
			fs[i] = store.Finish{EventID: e.ID, Token: "w1", Outcome: store.DeliveryOutcome{State: store.DeliveryPending,
				NextAttemptAt: time.Now().Add(time.Minute)}, Attempt: &a}
		}
		plan, err := db.ExplainFinishForTest(ctx, fs)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []map[string]any
		if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
			t.Fatal(err)
		}
		var walk func(n map[string]any)
		walk = func(n map[string]any) {
			if n["Node Type"] == "CTE Scan" && n["CTE Name"] == "v" {
				t.Errorf("the finish scans v as a CTE (materialized, read more than once): %s", plan)
			}
			children, _ := n["Plans"].([]any)
			for _, c := range children {
				if m, ok := c.(map[string]any); ok {
					walk(m)
				}
			}
		}
		for _, n := range nodes {
			walk(n["Plan"].(map[string]any))
		}
	})
}

// A batch fn's finishes wait for the commit (FinishDeliveriesAtCommit: on
// PostgreSQL they go out in the commit's round trip) and answer once it
// has committed: a held lease moves its delivery on, a lost one keeps its
// attempt in webhook_attempts and leaves the holder's delivery alone. A
// statement of the transaction that reads the deliveries sees the finish
// (it is written first), and a batch that fails to commit leaves nothing
// of it behind: run again, it answers afresh.
func TestAttempts_FinishedAtCommitInABatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		held, lost := queueOne(t, db, 1), queueOne(t, db, 2)
		if cs, err := db.ClaimDeliveries(ctx, "w1", time.Millisecond, 10, 10); err != nil || len(cs) != 2 {
			t.Fatalf("claim: %v, %d", err, len(cs))
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := db.Write().FinishDeliveries(ctx, []store.Finish{{EventID: held.ID, Token: "w1",
			Outcome: store.DeliveryOutcome{State: store.DeliveryPending}}}); err != nil {
			t.Fatal(err)
		}
		if cs, err := db.ClaimDeliveries(ctx, "w2", time.Minute, 10, 10); err != nil || len(cs) != 2 {
			t.Fatalf("claim after expiry: %v, %d", err, len(cs))
		}
		// held is w2's (released above, claimed anew); so is lost, while w1
		// still reports on it.
		a1, a2 := attemptOf(held, 3), attemptOf(lost, 6)
		now := time.Now().UTC()
		fs := []store.Finish{
			{EventID: held.ID, Token: "w2", Outcome: store.DeliveryOutcome{State: store.DeliveryDelivered, DeliveredAt: &now}, Attempt: &a1},
			{EventID: lost.ID, Token: "w1", Outcome: store.DeliveryOutcome{State: store.DeliveryDelivered, DeliveredAt: &now}, Attempt: &a2},
		}
		answers := make([]bool, len(fs))
		var seen string
		insert := func(tx *store.Tx) error { return tx.InsertPlatform(ctx, newPlatform("around")) }
		finishFn := func(read bool) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				if err := tx.FinishDeliveriesAtCommit(ctx, fs, answers); err != nil {
					return err
				}
				if !read {
					return nil
				}
				return tx.QueryRowForTest(ctx, "SELECT state FROM webhook_deliveries WHERE event_id = '"+held.ID+"'", &seen)
			}
		}
		crash := func() error { return errors.New("crash before the commit") }
		for _, read := range []bool{false, true} {
			// The batch fails to commit; with read, the read made the finish
			// go out at once, inside the transaction.
			db.FailBatchCommits(crash)
			errs := db.RunBatchForTest(tn, nil, insert, finishFn(read), insert)
			db.FailBatchCommits(nil)
			for i, err := range errs {
				if !errors.Is(err, store.ErrBatchRedoForTest) {
					t.Fatalf("fn %d of the failed batch: %v", i, err)
				}
			}
			if read && seen != store.DeliveryDelivered {
				t.Fatalf("a read after the finish, in its transaction, saw %q", seen)
			}
			if d, err := db.Read().GetDelivery(ctx, held.Tenant, held.ID, false); err != nil || d.State != store.DeliveryPending || d.LeaseToken != "w2" {
				t.Fatalf("the uncommitted finish moved the delivery: %+v, %v", d, err)
			}
			if n := attemptRows(t, db, lost); n != 0 {
				t.Fatalf("the uncommitted finish kept %d attempts", n)
			}
		}
		if errs := db.RunBatchForTest(tn, nil, insert, finishFn(false), insert); errs[0] != nil || errs[1] != nil || errs[2] != nil {
			t.Fatalf("batch: %v", errs)
		}
		if !answers[0] || answers[1] {
			t.Fatalf("answers %v, want the first lease held and the second lost", answers)
		}
		if d, err := db.Read().GetDelivery(ctx, held.Tenant, held.ID, false); err != nil || d.State != store.DeliveryDelivered || d.LeaseUntil != nil {
			t.Fatalf("the held delivery: %+v, %v", d, err)
		}
		wantAttempts(t, db, held, 1000, a1)
		if d, err := db.Read().GetDelivery(ctx, lost.Tenant, lost.ID, false); err != nil || d.State != store.DeliveryPending || d.LeaseToken != "w2" {
			t.Fatalf("a lost lease's outcome moved the delivery: %+v, %v", d, err)
		}
		wantAttempts(t, db, lost, 1000, a2)
		if n := attemptRows(t, db, lost); n != 1 {
			t.Fatalf("%d rows in webhook_attempts for the lost lease's attempt, want 1", n)
		}
	})
}
