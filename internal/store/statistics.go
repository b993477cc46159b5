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
	return db.analyzeEach(ctx, `SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
		WHERE s.schemaname = current_schema()
		AND s.n_mod_since_analyze > 50 + 0.1 * GREATEST(c.reltuples, 0)
		AND COALESCE(GREATEST(s.last_analyze, s.last_autoanalyze), 'epoch') < now() - interval '30 seconds'`)
}

// analyzeEach runs ANALYZE on each table or index that query names.
func (db *DB) analyzeEach(ctx context.Context, query string) error {
	rows, err := db.read.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	var names []string
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var name string
		err := r.Scan(&name)
		names = append(names, name)
		return err
	})
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := db.write.ExecContext(ctx, `ANALYZE "`+strings.ReplaceAll(name, `"`, `""`)+`"`); err != nil {
			return err
		}
	}
	return nil
}

// analyzeUnmeasuredIndexes gives, on SQLite, statistics to every index that
// has none on a table whose other indexes have them: an ANALYZE (an
// operator's, or paymentsbench seed's) that ran before a migration added the
// index. SQLite's planner takes an index without statistics for a very
// selective one, and so read every GET /transactions page through migration
// 0067's created_at index, sorting the tenant's rows, instead of walking the
// id index (1M transactions: minutes for a read; docs/benchmarks.md,
// "Twenty-ninth session"). A database never analyzed is left as it is: its
// indexes are alike to the planner, which keeps to the one that needs no sort.
func (db *DB) analyzeUnmeasuredIndexes(ctx context.Context) error {
	if db.engine != SQLite {
		return nil
	}
	var stats int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'`).Scan(&stats)
	if err != nil || stats == 0 {
		return err
	}
	return db.analyzeEach(ctx, `SELECT m.name FROM sqlite_master m WHERE m.type = 'index'
		AND m.tbl_name IN (SELECT tbl FROM sqlite_stat1)
		AND m.name NOT IN (SELECT idx FROM sqlite_stat1 WHERE idx IS NOT NULL)`)
}
