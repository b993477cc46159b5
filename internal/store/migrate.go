package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Migrations are plain SQL that both engines accept (TEXT, BIGINT, INTEGER,
// BOOLEAN, partial indexes), numbered NNNN_name.sql and applied in order, each
// once, in one transaction. On PostgreSQL an advisory lock keeps several nodes
// starting at once from racing.
//
// A migration named NNNN_name.postgres.sql is PostgreSQL's alone: SQLite
// records its number as applied and runs nothing, so both engines keep one
// sequence of versions. It is for what only PostgreSQL can do or needs (an
// ALTER TABLE … DROP CONSTRAINT, which SQLite could do only by rebuilding
// the table); the schema the code relies on stays the same on both.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
	// postgresOnly: the file is NNNN_name.postgres.sql.
	postgresOnly bool
}

// postgresSuffix ends the name of a migration only PostgreSQL runs.
const postgresSuffix = ".postgres.sql"

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("store: migration %s: name must start with a number and '_'", e.Name())
		}
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body),
			postgresOnly: strings.HasSuffix(e.Name(), postgresSuffix)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("store: two migrations numbered %d", ms[i].version)
		}
	}
	return ms, nil
}

// statements splits a migration at semicolons that end a line.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			if s := strings.TrimSpace(cur.String()); s != ";" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// statementsFor are the statements of m that engine runs: none of a
// PostgreSQL-only migration on SQLite.
func (m migration) statementsFor(engine Engine) []string {
	if m.postgresOnly && engine != Postgres {
		return nil
	}
	return statements(m.sql)
}

func (db *DB) migrate(ctx context.Context) (err error) {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if db.engine == SQLite {
		// A migration that builds an index over a large table sorts its
		// rows in temporary files, not in the process's memory as the
		// writer's own sorts are (temp_store=MEMORY): building 0067's over
		// 1M rows took the server to 339 MiB (docs/benchmarks.md,
		// "Twenty-ninth session"). The writer is one connection.
		if _, err := db.write.ExecContext(ctx, "PRAGMA temp_store = FILE"); err != nil {
			return err
		}
		defer func() {
			if _, rerr := db.write.ExecContext(context.WithoutCancel(ctx), "PRAGMA temp_store = MEMORY"); err == nil {
				err = rerr
			}
		}()
	}
	return db.InTx(ctx, func(tx *Tx) error {
		if db.engine == Postgres {
			if _, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock(727378)"); err != nil {
				return fmt.Errorf("store: migration lock: %w", err)
			}
		}
		if _, err := tx.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("store: schema_migrations: %w", err)
		}
		applied := map[int]bool{}
		rows, err := tx.query(ctx, "SELECT version FROM schema_migrations")
		if err != nil {
			return err
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
			applied[v] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			for _, stmt := range m.statementsFor(db.engine) {
				if _, err := tx.exec(ctx, stmt); err != nil {
					return fmt.Errorf("store: migration %s: %w", m.name, err)
				}
			}
			if _, err := tx.exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, toMicros(db.now())); err != nil {
				return err
			}
		}
		return nil
	})
}

// SchemaVersion reports the highest applied migration.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.Read().queryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}
