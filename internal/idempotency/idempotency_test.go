package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func tenant(t *testing.T, db *store.DB) store.Tenant {
	t.Helper()
	c, err := platforms.Create(context.Background(), db, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	return store.Tenant{PlatformID: c.PlatformID, Env: store.EnvSandbox}
}

// effect is a stand-in for a service's write: one token row named name.
func effect(ctx context.Context, tx *store.Tx, tn store.Tenant, name string) error {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	return tx.InsertToken(ctx, store.Token{ID: id.New(id.Token), PlatformID: tn.PlatformID, Env: tn.Env,
		ClientID: auth.NewClientID(), SecretHash: "x", Name: name, Permissions: []string{auth.View},
		CreatedAt: now, UpdatedAt: now})
}

func effects(t *testing.T, db *store.DB, tn store.Tenant, name string) int {
	t.Helper()
	_, n, err := db.Read().ListTokens(context.Background(), tn, store.TokenFilter{Name: name}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// run makes the effect and records v in one transaction, as a service does.
func run(ctx context.Context, db *store.DB, tn store.Tenant, name string, v any) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		if err := effect(ctx, tx, tn, name); err != nil {
			return err
		}
		return Record(ctx, tx, v)
	})
}

type resource struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
}

func TestEncode_IsJSONWithNewline(t *testing.T) {
	b, err := Encode(resource{ID: "Q:1", Amount: 5})
	if err != nil || string(b) != `{"id":"Q:1","amount":5}`+"\n" {
		t.Fatalf("%q, %v", b, err)
	}
	if _, err := Encode(make(chan int)); err == nil {
		t.Fatal("an unencodable value is an error")
	}
}

func TestContext_RoundTrip(t *testing.T) {
	if FromContext(context.Background()) != nil {
		t.Fatal("no claim in a bare context")
	}
	c := &Claim{Key: "k"}
	if FromContext(With(context.Background(), c)) != c {
		t.Fatal("the claim attached is the claim returned")
	}
}

func TestRecord_WithoutClaimDoesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		if err := run(ctx, db, tn, "plain", resource{ID: "x"}); err != nil {
			t.Fatal(err)
		}
		if effects(t, db, tn, "plain") != 1 {
			t.Fatal("the effect commits")
		}
	})
}

// R-IDEM-02 at the store: the held claim's effect and its replayable response
// commit together; a retry finds the response, a different request with the
// key is told apart by its hash, and another tenant's key is independent.
func TestRecord_HeldClaimCommitsWithEffect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		until := db.Now().Add(time.Minute)
		rec, claimed, err := db.ClaimIdempotencyKey(ctx, tn, "k1", "hash-a", "lock-1", until)
		if err != nil || !claimed || rec.Done() {
			t.Fatalf("first claim: %+v %v %v", rec, claimed, err)
		}
		// A duplicate while the first is in flight neither claims nor sees a response.
		rec, claimed, err = db.ClaimIdempotencyKey(ctx, tn, "k1", "hash-a", "lock-2", until)
		if err != nil || claimed || rec.Done() || rec.LockToken != "lock-1" {
			t.Fatalf("duplicate in flight: %+v %v %v", rec, claimed, err)
		}
		c := &Claim{Tenant: tn, Key: "k1", LockToken: "lock-1", Status: 201}
		if err := run(With(ctx, c), db, tn, "held", resource{ID: "R:1", Amount: 7}); err != nil {
			t.Fatal(err)
		}
		want, _ := Encode(resource{ID: "R:1", Amount: 7})
		if string(c.Body) != string(want) {
			t.Fatalf("claim body %q", c.Body)
		}
		rec, claimed, err = db.ClaimIdempotencyKey(ctx, tn, "k1", "hash-a", "lock-3", until)
		if err != nil || claimed || !rec.Done() || rec.StatusCode != 201 || string(rec.ResponseBody) != string(want) {
			t.Fatalf("retry after commit: %+v %v %v", rec, claimed, err)
		}
		rec, claimed, err = db.ClaimIdempotencyKey(ctx, tn, "k1", "hash-b", "lock-4", until)
		if err != nil || claimed || rec.RequestHash != "hash-a" {
			t.Fatalf("another request with the key: %+v %v %v", rec, claimed, err)
		}
		other := store.Tenant{PlatformID: tn.PlatformID, Env: store.EnvProduction}
		if _, claimed, err := db.ClaimIdempotencyKey(ctx, other, "k1", "hash-b", "lock-5", until); err != nil || !claimed {
			t.Fatalf("the key is scoped to the tenant: %v %v", claimed, err)
		}
		if effects(t, db, tn, "held") != 1 {
			t.Fatal("one effect")
		}
	})
}

// A failing effect records nothing: the key stays in flight and a retry after
// the lock expires runs the request again.
func TestRecord_RolledBackEffectLeavesNoResponse(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		clock := db.Now()
		db.SetClock(func() time.Time { return clock })
		if _, ok, err := db.ClaimIdempotencyKey(ctx, tn, "k", "h", "lock-1", clock.Add(time.Second)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		boom := errors.New("boom")
		c := &Claim{Tenant: tn, Key: "k", LockToken: "lock-1", Status: 200}
		err := db.InTx(With(ctx, c), func(tx *store.Tx) error {
			if err := Record(With(ctx, c), tx, resource{ID: "never"}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		rec, err := db.Read().GetIdempotencyKey(ctx, tn, "k")
		if err != nil || rec.Done() || rec.ResponseBody != nil {
			t.Fatalf("after rollback: %+v %v", rec, err)
		}
		clock = clock.Add(2 * time.Second)
		if _, ok, err := db.ClaimIdempotencyKey(ctx, tn, "k", "h", "lock-2", clock.Add(time.Second)); !ok || err != nil {
			t.Fatalf("retry after the lock expired takes the key over: %v %v", ok, err)
		}
	})
}

// A holder that ran past its lock cannot record once a retry took the key
// over: its effect rolls back (OPERATION_IN_PROGRESS) and only the retry's
// effect and response remain.
func TestRecord_LostClaimRollsBackEffect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		clock := db.Now()
		db.SetClock(func() time.Time { return clock })
		if _, ok, err := db.ClaimIdempotencyKey(ctx, tn, "k", "h", "slow", clock.Add(time.Second)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		clock = clock.Add(999 * time.Millisecond)
		if _, ok, _ := db.ClaimIdempotencyKey(ctx, tn, "k", "h", "early", clock.Add(time.Second)); ok {
			t.Fatal("a live lock is not taken over")
		}
		clock = clock.Add(2 * time.Millisecond)
		rec, ok, err := db.ClaimIdempotencyKey(ctx, tn, "k", "h", "retry", clock.Add(time.Second))
		if !ok || err != nil || rec.LockToken != "retry" {
			t.Fatalf("takeover after expiry: %+v %v %v", rec, ok, err)
		}
		slow := &Claim{Tenant: tn, Key: "k", LockToken: "slow", Status: 201}
		err = run(With(ctx, slow), db, tn, "slow", resource{ID: "slow"})
		e, isAPI := apierr.From(err)
		if !isAPI || e.Status != 409 || e.Code != apierr.CodeOperationInProgress {
			t.Fatalf("the dead holder records: %v", err)
		}
		if effects(t, db, tn, "slow") != 0 {
			t.Fatal("the dead holder's effect must roll back")
		}
		retry := &Claim{Tenant: tn, Key: "k", LockToken: "retry", Status: 201}
		if err := run(With(ctx, retry), db, tn, "retry", resource{ID: "retry"}); err != nil {
			t.Fatal(err)
		}
		rec, err = db.Read().GetIdempotencyKey(ctx, tn, "k")
		want, _ := Encode(resource{ID: "retry"})
		if err != nil || rec.StatusCode != 201 || string(rec.ResponseBody) != string(want) || effects(t, db, tn, "retry") != 1 {
			t.Fatalf("after the retry: %+v %v", rec, err)
		}
		// A finished key is never taken over, however old its lock.
		clock = clock.Add(time.Hour)
		if _, ok, _ := db.ClaimIdempotencyKey(ctx, tn, "k", "h", "late", clock.Add(time.Second)); ok {
			t.Fatal("a finished key was claimed again")
		}
	})
}

// Of concurrent claims of one new key exactly one wins; the others see the
// winner's record or are told to look again (ErrConflict).
func TestClaim_ConcurrentExactlyOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		until := db.Now().Add(time.Minute)
		for i := range n {
			wg.Go(func() {
				_, ok, err := db.ClaimIdempotencyKey(ctx, tn, "same", "h", fmt.Sprint("lock-", i), until)
				if err != nil && !errors.Is(err, store.ErrConflict) {
					t.Errorf("claim: %v", err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d claims won, want 1", won)
		}
	})
}

// Optimistic claims: of concurrent requests with one new key exactly one
// commits its effect and response; every other gets ErrRaced and its effect
// rolls back.
func TestRecord_OptimisticRaceHasOneEffect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		const n = 6
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				c := &Claim{Tenant: tn, Key: "opt", Optimistic: true, Hash: "h"}
				errs[i] = run(With(ctx, c), db, tn, "opt", resource{ID: fmt.Sprint("R:", i)})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner == -1:
				winner = i
			case err == nil:
				t.Fatalf("requests %d and %d both committed", winner, i)
			case !errors.Is(err, ErrRaced):
				t.Fatalf("request %d: %v", i, err)
			}
		}
		if winner == -1 || effects(t, db, tn, "opt") != 1 {
			t.Fatalf("winner %d, effects %d", winner, effects(t, db, tn, "opt"))
		}
		rec, err := db.Read().GetIdempotencyKey(ctx, tn, "opt")
		var got resource
		if err != nil || rec.StatusCode != 200 || json.Unmarshal(rec.ResponseBody, &got) != nil || got.ID != fmt.Sprint("R:", winner) {
			t.Fatalf("stored %+v (%s), winner %d: %v", rec, rec.ResponseBody, winner, err)
		}
	})
}

// An optimistic claim keeps the success status it was given.
func TestRecord_OptimisticKeepsStatus(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, ctx := tenant(t, db), context.Background()
		c := &Claim{Tenant: tn, Key: "k201", Optimistic: true, Hash: "h", Status: 201}
		if err := run(With(ctx, c), db, tn, "x", resource{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		rec, err := db.Read().GetIdempotencyKey(ctx, tn, "k201")
		if err != nil || rec.StatusCode != 201 || rec.RequestHash != "h" || !rec.Done() {
			t.Fatalf("%+v %v", rec, err)
		}
	})
}
