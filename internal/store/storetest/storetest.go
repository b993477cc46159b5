// Package storetest opens fresh stores for tests: a SQLite file in a temporary
// directory, and, when PAYMENTS_TEST_POSTGRES_URL is set, a PostgreSQL schema of
// its own per test (dropped afterwards). Tests that must hold on both engines
// loop over Engines.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// PostgresEnv names the variable that enables the PostgreSQL runs.
const PostgresEnv = "PAYMENTS_TEST_POSTGRES_URL"

// Engine opens a fresh, migrated store of one kind.
type Engine struct {
	Name string
	Open func(t testing.TB) *store.DB
}

// Engines lists SQLite, plus PostgreSQL when PAYMENTS_TEST_POSTGRES_URL is set.
// In CI (CI=true) a missing PostgreSQL URL fails the test instead of skipping
// the engine, so CI always covers both.
func Engines(t testing.TB) []Engine {
	es := []Engine{{Name: "sqlite", Open: OpenSQLite}}
	if os.Getenv(PostgresEnv) != "" {
		es = append(es, Engine{Name: "postgres", Open: OpenPostgres})
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("%s must be set in CI so the store suite runs on PostgreSQL too", PostgresEnv)
	}
	return es
}

// Each runs fn as a subtest on every engine.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	for _, e := range Engines(t) {
		t.Run(e.Name, func(t *testing.T) { fn(t, e.Open(t)) })
	}
}

// EachWith is Each with stores opened with opts (MaxConns is set for
// PostgreSQL when zero).
func EachWith(t *testing.T, opts store.Options, fn func(t *testing.T, db *store.DB)) {
	for _, e := range Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			if e.Name == "postgres" {
				fn(t, openPostgres(t, opts))
				return
			}
			fn(t, openSQLite(t, opts))
		})
	}
}

// OpenSQLite opens a store in a new temporary directory.
func OpenSQLite(t testing.TB) *store.DB { return openSQLite(t, store.Options{}) }

func openSQLite(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "payments.db"), opts)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// OpenPostgres opens a store in a new schema of the test server.
func OpenPostgres(t testing.TB) *store.DB { return openPostgres(t, store.Options{}) }

func openPostgres(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	if opts.MaxConns == 0 {
		opts.MaxConns = 8
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("%s not set", PostgresEnv)
	}
	schema := "t_" + randHex(8)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", base)
		if err == nil {
			_, _ = a.Exec("DROP SCHEMA " + schema + " CASCADE")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	qs := u.Query()
	qs.Set("search_path", schema)
	u.RawQuery = qs.Encode()
	db, err := store.Open(context.Background(), u.String(), opts)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
