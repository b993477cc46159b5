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

	"github.com/paymentsd/paymentsd/internal/keyring"
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

// EachWithOwnDatabase is EachWith, except that on PostgreSQL the store is in
// a database of its own (dropped when the test ends), not a schema, and fn
// gets that database's URL ("" on SQLite). It is for a test that reads
// database-wide statistics, such as pg_stat_database's deadlock counter,
// which the other tests on the shared database move: in CI the packages'
// tests run at the same time on one database.
func EachWithOwnDatabase(t *testing.T, opts store.Options, fn func(t *testing.T, db *store.DB, pgURL string)) {
	for _, e := range Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			if e.Name != "postgres" {
				fn(t, openSQLite(t, opts), "")
				return
			}
			u := postgresDatabase(t)
			fn(t, openURL(t, u, opts), u)
		})
	}
}

// OpenSQLite opens a store in a new temporary directory.
func OpenSQLite(t testing.TB) *store.DB { return openSQLite(t, store.Options{}) }

func openSQLite(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	return openURL(t, "sqlite:"+filepath.Join(t.TempDir(), "payments.db"), opts)
}

// openURL opens the database at url, with the test key ring unless opts
// has one, and closes it when the test ends.
func openURL(t testing.TB, url string, opts store.Options) *store.DB {
	t.Helper()
	if opts.Keyring == nil {
		opts.Keyring = testKeyring
	}
	db, err := store.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// testKeyring seals the secrets of test stores (one key per test process).
var testKeyring = func() *keyring.Keyring {
	k, err := keyring.Generate("test")
	if err != nil {
		panic(err)
	}
	r, err := keyring.New(k)
	if err != nil {
		panic(err)
	}
	return r
}()

// EachReopen runs fn as a subtest on every engine with a fresh database
// that open opens, again and again (each time a new *store.DB over the same
// data), with the given options; a nil Keyring uses the test key ring.
func EachReopen(t *testing.T, fn func(t *testing.T, open func(store.Options) *store.DB)) {
	for _, e := range Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			url := "sqlite:" + filepath.Join(t.TempDir(), "payments.db")
			if e.Name == "postgres" {
				url = postgresSchema(t)
			}
			fn(t, func(opts store.Options) *store.DB {
				if opts.MaxConns == 0 {
					opts.MaxConns = 4
				}
				return openURL(t, url, opts)
			})
		})
	}
}

// OpenPostgres opens a store in a new schema of the test server.
func OpenPostgres(t testing.TB) *store.DB { return openPostgres(t, store.Options{}) }

func openPostgres(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	if opts.MaxConns == 0 {
		opts.MaxConns = 8
	}
	return openURL(t, postgresSchema(t), opts)
}

// postgresSchema makes a schema of its own for the test, dropped when it
// ends, and returns the URL that uses it.
func postgresSchema(t testing.TB) string {
	t.Helper()
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
	return u.String()
}

// postgresDatabase makes a database of its own for the test, dropped when
// it ends, and returns the URL that uses it.
func postgresDatabase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("%s not set", PostgresEnv)
	}
	name := "t_" + randHex(8)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer admin.Close()
	// template0: nobody is connected to it, which CREATE DATABASE requires.
	if _, err := admin.Exec("CREATE DATABASE " + name + " TEMPLATE template0"); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", base)
		if err == nil {
			_, _ = a.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
