package store

import (
	"context"
	"database/sql"
)

// Hooks for the external tests of this package that damage or rewind the
// schema.

func (db *DB) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := db.Write().exec(ctx, query, args...)
	return err
}

func (db *DB) MigrateForTest(ctx context.Context) error { return db.migrate(ctx) }

type LedgerBucketKey struct {
	AccountID         string
	Span, BucketStart int64
}

// LedgerBucketsForTest reads every bucket's amount.
func (db *DB) LedgerBucketsForTest(ctx context.Context) (map[LedgerBucketKey]int64, error) {
	rows, err := db.Read().query(ctx, "SELECT account_id, span, bucket_start, amount FROM ledger_posting_buckets")
	if err != nil {
		return nil, err
	}
	out := map[LedgerBucketKey]int64{}
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var acct string
		var span, start, amount int64
		err := r.Scan(&acct, &span, &start, &amount)
		out[LedgerBucketKey{acct, span, start}] = amount
		return err
	})
	return out, err
}
