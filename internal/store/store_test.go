package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The contract suite: every test here runs on SQLite and on PostgreSQL.

var ctx = context.Background()

func mustPlatform(t *testing.T, db *store.DB, isDefault bool) store.Platform {
	t.Helper()
	p := store.Platform{ID: id.New(id.Platform), Name: "p", IsDefault: isDefault, CreatedAt: db.Now().UTC().Truncate(time.Microsecond)}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, p) }); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustToken(t *testing.T, db *store.DB, tn store.Tenant, name string) store.Token {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	tok := store.Token{ID: id.New(id.Token), PlatformID: tn.PlatformID, Env: tn.Env, ClientID: id.New("c")[2:],
		SecretHash: "h", Name: name, Permissions: []string{"VIEW", "TRANSACT"}, CreatedAt: now, UpdatedAt: now}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertToken(ctx, tok) }); err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestMigrationsAreIdempotent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		v, err := db.SchemaVersion(ctx)
		if err != nil || v < 1 {
			t.Fatalf("schema version %d, %v", v, err)
		}
	})
}

func TestPlatforms_SingleDefault(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		got, err := db.Read().DefaultPlatform(ctx)
		if err != nil || got.ID != p.ID || !got.IsDefault || !got.CreatedAt.Equal(p.CreatedAt) {
			t.Fatalf("default platform = %+v, %v", got, err)
		}
		second := store.Platform{ID: id.New(id.Platform), Name: "q", IsDefault: true, CreatedAt: time.Now()}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatform(ctx, second) })
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second default platform: got %v, want ErrConflict", err)
		}
		mustPlatform(t, db, false) // non-default platforms are unlimited
		if _, err := db.Read().GetPlatform(ctx, "Platform:missing"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing platform: %v", err)
		}
	})
}

func TestTokens_RoundTripAndTenancy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		sb := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		prod := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		tok := mustToken(t, db, sb, "a")
		exp := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
		tok2 := tok
		tok2.ID, tok2.ClientID, tok2.ExpiresAt = id.New(id.Token), "client-2", &exp
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertToken(ctx, tok2) }); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().GetToken(ctx, sb, tok2.ID)
		if err != nil || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || len(got.Permissions) != 2 {
			t.Fatalf("round trip: %+v %v", got, err)
		}
		if _, err := db.Read().GetToken(ctx, prod, tok.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another environment must not see the token: %v", err)
		}
		dup := tok
		dup.ID = id.New(id.Token)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertToken(ctx, dup) }); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate client id: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteToken(ctx, prod, tok.ID, time.Now()) }); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete from another environment: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteToken(ctx, sb, tok.ID, time.Now()) }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read().GetToken(ctx, sb, tok.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted token still listed: %v", err)
		}
		byClient, err := db.Read().TokenByClientID(ctx, tok.ClientID)
		if err != nil || byClient.DeletedAt == nil {
			t.Fatalf("deleted token must stay readable for audit with deleted_at: %+v %v", byClient, err)
		}
		// Reset revives it with new credentials.
		byClient.SecretHash, byClient.UpdatedAt = "h2", time.Now()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.ResetToken(ctx, byClient) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Read().TokenByClientID(ctx, tok.ClientID); got.DeletedAt != nil || got.SecretHash != "h2" {
			t.Fatalf("reset: %+v", got)
		}
	})
}

// R-CONV-12, R-CONV-13: keyset pages cover the list without gaps or repeats,
// and totalCount counts the filtered list.
func TestTokens_KeysetPagination(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		other := store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}
		want := map[string]bool{}
		for i := range 45 {
			tok := mustToken(t, db, tn, fmt.Sprintf("n%d", i%3))
			want[tok.ID] = true
		}
		mustToken(t, db, other, "n0")
		seen := map[string]bool{}
		after := ""
		for pages := 0; ; pages++ {
			rows, total, err := db.Read().ListTokens(ctx, tn, store.TokenFilter{}, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			if total != 45 {
				t.Fatalf("total %d", total)
			}
			for _, r := range rows {
				if seen[r.ID] || !want[r.ID] {
					t.Fatalf("repeat or foreign row %s", r.ID)
				}
				seen[r.ID] = true
			}
			if len(rows) < 7 {
				break
			}
			after = rows[len(rows)-1].ID
		}
		if len(seen) != 45 {
			t.Fatalf("saw %d of 45", len(seen))
		}
		rows, total, err := db.Read().ListTokens(ctx, tn, store.TokenFilter{Name: "n1"}, "", 100)
		if err != nil || total != 15 || len(rows) != 15 {
			t.Fatalf("filter by name: %d rows, total %d, %v", len(rows), total, err)
		}
		future := time.Now().Add(time.Hour)
		if _, total, _ := db.Read().ListTokens(ctx, tn, store.TokenFilter{CreatedAfter: &future}, "", 100); total != 0 {
			t.Fatalf("createdAfter filter: total %d", total)
		}
	})
}

func TestPlatformConfig_ReadModifyWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p := mustPlatform(t, db, true)
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		now := time.Now().UTC().Truncate(time.Microsecond)
		c := store.PlatformConfig{ID: id.New(id.PlatformConfig), Tenant: tn, Document: []byte(`{"a":1}`), CreatedAt: now, UpdatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPlatformConfig(ctx, c) }); err != nil {
			t.Fatal(err)
		}
		// Concurrent increments under the row lock lose no update.
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					cur, err := tx.GetPlatformConfig(ctx, tn, true)
					if err != nil {
						return err
					}
					var n int
					fmt.Sscanf(string(cur.Document), `{"a":%d}`, &n)
					cur.Document = []byte(fmt.Sprintf(`{"a":%d}`, n+1))
					return tx.UpdatePlatformConfig(ctx, cur)
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got, err := db.Read().GetPlatformConfig(ctx, tn, false)
		if err != nil || string(got.Document) != `{"a":11}` {
			t.Fatalf("after 10 increments: %s %v", got.Document, err)
		}
		if _, err := db.Read().GetPlatformConfig(ctx, store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other environment: %v", err)
		}
	})
}

// R-IDEM-02: the first claimant runs, duplicates see its record; a claim
// whose holder died is taken over; a lost claim cannot record.
func TestIdempotency_ClaimCompleteReplay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: "Platform:x", Env: store.EnvSandbox}
		until := db.Now().Add(time.Minute)
		rec, claimed, err := db.ClaimIdempotencyKey(ctx, tn, "k1", "h1", "lockA", until)
		if err != nil || !claimed || rec.Done() {
			t.Fatalf("first claim: %+v %v %v", rec, claimed, err)
		}
		rec, claimed, err = db.ClaimIdempotencyKey(ctx, tn, "k1", "h1", "lockB", until)
		if err != nil || claimed || rec.Done() || rec.LockToken != "lockA" {
			t.Fatalf("in-flight duplicate: %+v %v %v", rec, claimed, err)
		}
		rec, _, _ = db.ClaimIdempotencyKey(ctx, tn, "k1", "other", "lockB", until)
		if rec.RequestHash != "h1" {
			t.Fatalf("a different request must see the original hash, got %q", rec.RequestHash)
		}
		if err := db.Write().CompleteIdempotencyKey(ctx, tn, "k1", "lockB", 201, []byte("x")); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("completing without holding the claim: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.CompleteIdempotencyKey(ctx, tn, "k1", "lockA", 201, []byte(`{"id":1}`))
		}); err != nil {
			t.Fatal(err)
		}
		rec, claimed, err = db.ClaimIdempotencyKey(ctx, tn, "k1", "h1", "lockC", until)
		if err != nil || claimed || !rec.Done() || rec.StatusCode != 201 || string(rec.ResponseBody) != `{"id":1}` {
			t.Fatalf("replay: %+v %v %v", rec, claimed, err)
		}
		// Other tenants have their own key space.
		if _, claimed, _ := db.ClaimIdempotencyKey(ctx, store.Tenant{PlatformID: "Platform:x", Env: store.EnvProduction}, "k1", "h1", "l", until); !claimed {
			t.Fatal("same key in another environment must be independent")
		}

		// A dead holder's expired lock is taken over; the dead holder can no
		// longer record.
		past := db.Now().Add(-time.Second)
		if _, claimed, _ := db.ClaimIdempotencyKey(ctx, tn, "k2", "h", "dead", past); !claimed {
			t.Fatal("claim k2")
		}
		rec, claimed, err = db.ClaimIdempotencyKey(ctx, tn, "k2", "h", "alive", until)
		if err != nil || !claimed || rec.LockToken != "alive" {
			t.Fatalf("takeover: %+v %v %v", rec, claimed, err)
		}
		if err := db.Write().CompleteIdempotencyKey(ctx, tn, "k2", "dead", 200, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("dead holder recorded after takeover: %v", err)
		}
		// Release forgets an unfinished claim.
		if err := db.Write().ReleaseIdempotencyKey(ctx, tn, "k2", "alive"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read().GetIdempotencyKey(ctx, tn, "k2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("released key still present: %v", err)
		}
	})
}

// R-IDEM-02: of many concurrent claimants of one key exactly one wins.
func TestIdempotency_ConcurrentClaimsOneWinner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: "Platform:x", Env: store.EnvSandbox}
		var winners atomic.Int32
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					_, claimed, err := db.ClaimIdempotencyKey(ctx, tn, "hot", "h", fmt.Sprint("lock", i), db.Now().Add(time.Minute))
					if errors.Is(err, store.ErrConflict) {
						continue
					}
					if err != nil {
						t.Error(err)
					}
					if claimed {
						winners.Add(1)
					}
					return
				}
			}()
		}
		wg.Wait()
		if winners.Load() != 1 {
			t.Fatalf("%d winners, want 1", winners.Load())
		}
	})
}

func TestIdempotency_PurgeKeepsRecentKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn := store.Tenant{PlatformID: "Platform:x", Env: store.EnvSandbox}
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return base })
		db.ClaimIdempotencyKey(ctx, tn, "old", "h", "l", base.Add(time.Minute))
		db.Write().CompleteIdempotencyKey(ctx, tn, "old", "l", 200, []byte("{}"))
		db.SetClock(func() time.Time { return base.Add(30 * time.Hour) })
		db.ClaimIdempotencyKey(ctx, tn, "new", "h", "l", base.Add(31*time.Hour))
		db.Write().CompleteIdempotencyKey(ctx, tn, "new", "l", 200, []byte("{}"))
		n, err := db.Write().PurgeIdempotencyKeys(ctx, base.Add(6*time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("purged %d, %v", n, err)
		}
		if _, err := db.Read().GetIdempotencyKey(ctx, tn, "new"); err != nil {
			t.Fatalf("recent key purged: %v", err)
		}
	})
}

func TestServerSecret_StableAcrossCalls(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		a, err := db.ServerSecret(ctx, "s")
		if err != nil || len(a) != 32 {
			t.Fatalf("%x %v", a, err)
		}
		b, _ := db.ServerSecret(ctx, "s")
		c, _ := db.ServerSecret(ctx, "other")
		if string(a) != string(b) || string(a) == string(c) {
			t.Fatal("secrets must be stable per name and distinct across names")
		}
	})
}

func TestInTx_RollsBackOnError(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		boom := errors.New("boom")
		p := store.Platform{ID: id.New(id.Platform), Name: "p", CreatedAt: time.Now()}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertPlatform(ctx, p); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if _, err := db.Read().GetPlatform(ctx, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("rolled-back insert is visible: %v", err)
		}
	})
}

func TestOpen_RejectsUnknownURL(t *testing.T) {
	for _, u := range []string{"mysql://x", "sqlite:", "postgres-ish"} {
		if _, err := store.Open(ctx, u, store.Options{}); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

// RefreshPlannerStatistics analyzes a table that grew from nothing
// (PostgreSQL; a no-op on SQLite).
func TestRefreshPlannerStatistics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Engine() == store.Postgres {
			// Autovacuum would analyze the table too when it happens by
			// (last_autoanalyze), and then the refresh rightly skips it.
			if err := db.ExecRaw(ctx, "ALTER TABLE api_tokens SET (autovacuum_enabled = false)"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 120 {
			mustToken(t, db, store.Tenant{PlatformID: mustPlatform(t, db, false).ID, Env: store.EnvSandbox}, fmt.Sprint(i))
		}
		// Backends report their row counts to the statistics views a moment
		// after they commit: poll.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if err := db.RefreshPlannerStatistics(ctx); err != nil {
				t.Fatal(err)
			}
			if db.Engine() != store.Postgres {
				return
			}
			var analyzed bool
			err := db.Read().QueryRowForTest(ctx, `SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables
				WHERE schemaname = current_schema() AND relname = 'api_tokens'`, &analyzed)
			if err != nil {
				t.Fatal(err)
			}
			if analyzed {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("api_tokens was never analyzed")
			}
		}
	})
}
