package store_test

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// On PostgreSQL the store reads its tables' column types when it opens, from
// its own schema: without them every batch write would fall back to VALUES
// lists (unnest.go) and nothing would fail to say so.
func TestColumnTypesRead(t *testing.T) {
	db := storetest.OpenPostgres(t)
	for _, c := range []struct{ table, col, want string }{
		{"events", "envelope", "text"},
		{"ledger_postings", "amount", "bigint"},
		{"ledger_postings", "pending", "boolean"},
		{"webhook_deliveries", "attempts", "integer"},
		{"transactions", "agent_id", "text"},
		{"quotes", "usd_equivalent", "bigint"},
	} {
		if got := db.ColumnTypeForTest(c.table, c.col); got != c.want {
			t.Errorf("%s.%s: %q, want %q", c.table, c.col, got, c.want)
		}
	}
	if got := db.ColumnTypeForTest("pg_class", "relname"); got != "" {
		t.Errorf("a system catalog's column was read: %q", got)
	}
}
