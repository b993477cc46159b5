package events

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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
	envs := []Envelope{}
	for _, data := range append(datas, nil) {
		envs = append(envs, Envelope{ID: "Event:1", Type: "OUTGOING_PAYMENT.COMPLETED", Timestamp: at, Data: data})
	}
	// The head is appended by hand: strings json.Marshal escapes, other
	// zones and precisions of the timestamp.
	for _, s := range []string{"", `a"b`, `a\b`, "<&>", "tab\there", "ünï", "\u2028", "\x7f", "\xff"} {
		envs = append(envs, Envelope{ID: s, Type: s, Timestamp: at, Data: datas[0]})
	}
	for _, ts := range []time.Time{{}, at.Truncate(time.Second), at.In(time.FixedZone("x", -5*3600-30*60)), time.Date(1, 2, 3, 4, 5, 6, 7, time.UTC)} {
		envs = append(envs, Envelope{ID: "Event:2", Type: "INCOMING_PAYMENT.COMPLETED", Timestamp: ts, Data: datas[0]})
	}
	for _, e := range envs {
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
	// A timestamp json.Marshal refuses is refused.
	if _, err := (Envelope{Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}).encode(); err == nil {
		t.Fatal("encoded a timestamp past year 9999")
	}
}

// BenchmarkEnvelopeEncode: an event's envelope around a transaction's
// 1.3 KB of data (go test -bench EnvelopeEncode ./internal/events).
func BenchmarkEnvelopeEncode(b *testing.B) {
	e := Envelope{ID: "Event:019ac3d2-8f4e-7a61-b1c2-3d4e5f607182", Type: "OUTGOING_PAYMENT.COMPLETED",
		Timestamp: time.Now().UTC().Truncate(time.Microsecond), Data: json.RawMessage(`{"x":"` + strings.Repeat("y", 1300) + `"}`)}
	for b.Loop() {
		if _, err := e.encode(); err != nil {
			b.Fatal(err)
		}
	}
}
