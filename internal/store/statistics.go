package store

import (
	"context"
	"database/sql"
	"strings"
)

// RefreshPlannerStatistics analyzes, on PostgreSQL, the tables of the store's
// schema that changed enough since their last analysis (autovacuum's own
// threshold: 50 rows plus a tenth of the table) and were not analyzed in the
// last 30 seconds. Autovacuum would get there, but only after its naptime (a
// minute or more), and a fresh database under load grows from empty to
// thousands of rows in that time: with no statistics the planner sorted the
// whole webhook backlog for each claim (400 ms at 10,000 pending deliveries)
// and walked tenant indexes instead of primary keys (docs/benchmarks.md).
// SQLite's planner does not need this.
func (db *DB) RefreshPlannerStatistics(ctx context.Context) error {
	if db.engine != Postgres {
		return nil
	}
	rows, err := db.read.QueryContext(ctx, `SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
		WHERE s.schemaname = current_schema()
		AND s.n_mod_since_analyze > 50 + 0.1 * GREATEST(c.reltuples, 0)
		AND COALESCE(GREATEST(s.last_analyze, s.last_autoanalyze), 'epoch') < now() - interval '30 seconds'`)
	if err != nil {
		return err
	}
	var tables []string
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var t string
		err := r.Scan(&t)
		tables = append(tables, t)
		return err
	})
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := db.write.ExecContext(ctx, `ANALYZE "`+strings.ReplaceAll(t, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return nil
}
