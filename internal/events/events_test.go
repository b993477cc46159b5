package events

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

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

// The envelope Emit stores is byte for byte what json.Marshal makes of it,
// for data as Emit makes it (json.Marshal output: compact, HTML-escaped).
func TestEnvelopeEncode_AsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)
	var datas []json.RawMessage
	for _, v := range []any{map[string]any{"a": 1, "b": "x<y>&z \u2028", "c": []int{1, 2}, "d": "ünï"}, nil, "s", 3.5} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		datas = append(datas, raw)
	}
	for _, data := range append(datas, nil) {
		e := Envelope{ID: "Event:1", Type: "OUTGOING_PAYMENT.COMPLETED", Timestamp: at, Data: data}
		got, err := e.encode()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("encode %s\nMarshal %s", got, want)
		}
	}
}
