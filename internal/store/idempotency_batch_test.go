package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// In a batch (of one request or more) an idempotency record waits for the
// batch's commit; a statement of the same transaction still reads it. Two
// requests of one batch that finish the same key fail that commit; each then
// runs alone, where the first stores its record and the second gets
// ErrConflict from the insert itself (the caller's cue to replay the
// first), with nothing of it committed.
func TestInBatchTx_IdempotencyRecordAtCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: time.Now()}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }); err != nil {
			t.Fatal(err)
		}
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		// record finishes key with body in a fn; with marker, the fn also
		// stores that platform; with readBack, it reads the record again
		// through the transaction.
		record := func(key, body string, marker *store.Platform, readBack bool) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				if marker != nil {
					if err := tx.InsertPlatform(ctx, *marker); err != nil {
						return err
					}
				}
				if err := tx.InsertIdempotencyRecord(ctx, tn, key, "h", 200, []byte(body)); err != nil {
					return &insertErr{err}
				}
				if !readBack {
					return nil
				}
				got, err := tx.GetIdempotencyKey(ctx, tn, key)
				if err == nil && string(got.ResponseBody) != body {
					t.Errorf("the transaction reads %q; want its own record %q", got.ResponseBody, body)
				}
				return err
			}
		}
		// Two different keys share a commit.
		errs := db.RunBatchForTest(tn, nil, record("k1", "one", nil, true), record("k2", "two", nil, true))
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("answers %v", errs)
		}
		for key, want := range map[string]string{"k1": "one", "k2": "two"} {
			if got, err := db.Read().GetIdempotencyKey(ctx, tn, key); err != nil || string(got.ResponseBody) != want {
				t.Fatalf("%s: %q, %v; want %q", key, got.ResponseBody, err, want)
			}
		}
		// The same key twice in one batch: neither commits there. (Had the
		// second read the table, the queued rows would have gone in before
		// that read, and the conflict been its own error at once.)
		m1 := store.Platform{ID: id.New(id.Platform), Name: "first", CreatedAt: time.Now()}
		m2 := store.Platform{ID: id.New(id.Platform), Name: "second", CreatedAt: time.Now()}
		errs = db.RunBatchForTest(tn, nil, record("k3", "first", &m1, false), record("k3", "second", &m2, false))
		if !errors.Is(errs[0], store.ErrBatchRedoForTest) || !errors.Is(errs[1], store.ErrBatchRedoForTest) {
			t.Fatalf("answers %v; want both run again", errs)
		}
		if _, err := db.Read().GetIdempotencyKey(ctx, tn, "k3"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("k3 after the failed commit: %v; want not found", err)
		}
		// Alone, as the batch runs them again.
		if err := db.RunAloneForTest(tn, nil, record("k3", "first", &m1, false)); err != nil {
			t.Fatal(err)
		}
		// A batch of one that is not alone queues its record too: the key
		// taken fails its commit, and it would run again, alone.
		if errs := db.RunBatchForTest(tn, nil, record("k3", "second", &m2, false)); !errors.Is(errs[0], store.ErrBatchRedoForTest) {
			t.Fatalf("the second in a batch of one: %v; want it run again", errs[0])
		}
		var atInsert *insertErr
		if err := db.RunAloneForTest(tn, nil, record("k3", "second", &m2, false)); !errors.As(err, &atInsert) ||
			!errors.Is(err, store.ErrConflict) {
			t.Fatalf("the second alone: %v; want ErrConflict from its insert", err)
		}
		if got, err := db.Read().GetIdempotencyKey(ctx, tn, "k3"); err != nil || string(got.ResponseBody) != "first" {
			t.Fatalf("k3: %q, %v; want the first's", got.ResponseBody, err)
		}
		if _, err := db.Read().GetPlatform(ctx, m2.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the second's other write: %v; want rolled back", err)
		}
	})
}

// insertErr marks an error InsertIdempotencyRecord itself returned.
type insertErr struct{ err error }

func (e *insertErr) Error() string { return "insert: " + e.err.Error() }
func (e *insertErr) Unwrap() error { return e.err }
