package events

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Events commit with their cause or not at all.
func TestEmit_CommitsWithTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		tn := store.Tenant{PlatformID: "Platform:p", Env: store.EnvSandbox}
		var kept, dropped Envelope
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			kept, err = Emit(ctx, tx, tn, "TEST", "Thing:1", map[string]int{"n": 1})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		err = db.InTx(ctx, func(tx *store.Tx) error {
			dropped, _ = Emit(ctx, tx, tn, "TEST", "Thing:2", nil)
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		got, err := db.Read().GetEvent(ctx, tn, kept.ID)
		if err != nil {
			t.Fatal(err)
		}
		var env Envelope
		if err := json.Unmarshal(got.Envelope, &env); err != nil || env.Type != "TEST" || string(env.Data) != `{"n":1}` || !id.Valid(id.Event, env.ID) {
			t.Fatalf("%s %v", got.Envelope, err)
		}
		if _, err := db.Read().GetEvent(ctx, tn, dropped.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("an event of a rolled-back transaction was kept")
		}
		if _, err := db.Read().GetEvent(ctx, store.Tenant{PlatformID: "Platform:p", Env: store.EnvProduction}, kept.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("events are scoped by tenant")
		}
	})
}
