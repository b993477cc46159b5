package store

import (
	"context"
	"testing"
)

// A value loaded while a writer commits must not be kept: the writer's
// invalidation after its commit moves the generation the reader started
// from, so the next read loads again.
func TestSettingsCache_ReadRacingACommitIsNotKept(t *testing.T) {
	c := newSettingsCache()
	k := settingKey{kind: settingConfig, tenant: Tenant{PlatformID: "Platform:p", Env: EnvSandbox}}
	ctx := context.Background()
	loads := 0
	load := func(v string, during func()) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			loads++
			if during != nil {
				during()
			}
			return v, nil
		}
	}
	// The read sees the old row; the writer commits and invalidates before
	// the reader stores it.
	if v, _ := get(ctx, c, k, load("old", func() { c.invalidate(k) })); v != "old" {
		t.Fatal(v)
	}
	if v, _ := get(ctx, c, k, load("new", nil)); v != "new" || loads != 2 {
		t.Fatalf("got %q after %d loads: the stale read was cached", v, loads)
	}
	if v, _ := get(ctx, c, k, load("unused", nil)); v != "new" || loads != 2 {
		t.Fatalf("got %q after %d loads: the fresh read was not cached", v, loads)
	}
	c.invalidate(k)
	if v, _ := get(ctx, c, k, load("newer", nil)); v != "newer" || loads != 3 {
		t.Fatalf("got %q after %d loads: invalidate did not forget", v, loads)
	}
}

// combine makes one statement of several writes, the earlier ones WITH
// queries, arguments in order (the outbox and counters at commit).
func TestCombine_WritesAsOneStatement(t *testing.T) {
	q, args := combine([]statement{{sql: "INSERT INTO a VALUES (?)", args: []any{1}}, {sql: "INSERT INTO b VALUES (?, ?)", args: []any{2, 3}},
		{sql: "UPDATE c SET x = ?", args: []any{4}}})
	want := "WITH w0 AS (INSERT INTO a VALUES (?)), w1 AS (INSERT INTO b VALUES (?, ?)) UPDATE c SET x = ?"
	if q != want || len(args) != 4 || args[0] != 1 || args[3] != 4 {
		t.Fatalf("%s %v", q, args)
	}
	if got := (Q{engine: Postgres}).rebind(q); got != "WITH w0 AS (INSERT INTO a VALUES ($1)), w1 AS (INSERT INTO b VALUES ($2, $3)) UPDATE c SET x = $4" {
		t.Fatal(got)
	}
}
