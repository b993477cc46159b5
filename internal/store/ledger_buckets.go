package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"time"
)

// ledger_posting_buckets (migration 0013) holds the sums of the posted
// postings of every account with a balance row, per hour and per day, so
// that LedgerPostedSumBefore reads about one row per day of history instead
// of one per posting.

// Bucket spans in microseconds. The SQL below spells them out.
const (
	LedgerBucketHour int64 = 3_600_000_000
	LedgerBucketDay  int64 = 24 * LedgerBucketHour
)

// ledgerBucketStart rounds us down to a multiple of span, as the SQL does.
func ledgerBucketStart(us, span int64) int64 {
	return us - ((us%span)+span)%span
}

// ledgerPostingsByBucket is every posted posting of an account with a
// balance row, once per span, with its bucket.
const ledgerPostingsByBucket = `SELECT p.account_id, s.span,
		p.created_at - ((p.created_at % s.span) + s.span) % s.span AS bucket_start, p.amount
	FROM ledger_postings p
	JOIN ledger_balances b ON b.account_id = p.account_id
	CROSS JOIN (SELECT 3600000000 AS span UNION ALL SELECT 86400000000) s
	WHERE NOT p.pending`

// ledgerBucketUpserts add posted postings to their accounts' buckets.
// WriteLedger passes only posted postings of accounts with a balance row and,
// on PostgreSQL, holds those rows' locks: then no two writers upsert the same
// bucket at once. Postings are summed per bucket first, so each bucket is
// written once.
func (q Q) ledgerBucketUpserts(ps []LedgerPosting) []statement {
	type key struct {
		account     string
		span, start int64
	}
	sums := map[key]int64{}
	for _, p := range ps {
		us := toMicros(p.CreatedAt)
		for _, span := range []int64{LedgerBucketHour, LedgerBucketDay} {
			sums[key{p.AccountID, span, ledgerBucketStart(us, span)}] += p.Amount
		}
	}
	keys := make([]key, 0, len(sums))
	for k, sum := range sums {
		if sum != 0 { // a bucket that would not change
			keys = append(keys, k)
		}
	}
	// One order for every writer, like the balance rows.
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.account != b.account {
			return a.account < b.account
		}
		if a.span != b.span {
			return a.span < b.span
		}
		return a.start < b.start
	})
	var out []statement
	for start := 0; start < len(keys); start += ledgerChunk {
		part := keys[start:min(start+ledgerChunk, len(keys))]
		args := make([]any, 0, len(part)*4)
		for _, k := range part {
			args = append(args, k.account, k.span, k.start, sums[k])
		}
		out = append(out, q.insertRows("ledger_posting_buckets", []string{"account_id", "span", "bucket_start", "amount"},
			len(part), args, ` ON CONFLICT (account_id, span, bucket_start)
			DO UPDATE SET amount = ledger_posting_buckets.amount + excluded.amount`))
	}
	return out
}

// LedgerPostedSumBefore sums an account's posted postings created before at
// (all of them when at is nil): its posted balance at that instant.
//
// An account with a balance row is read from its buckets: whole days before
// at's day, whole hours of that day before at's hour, then the postings of
// at's hour (the statement index); with at nil, the row's posted total is
// the sum. A hot account has no buckets and no statement; its postings are
// summed.
func (q Q) LedgerPostedSumBefore(ctx context.Context, t Tenant, accountID string, at *time.Time) (int64, error) {
	// Read through the balance row, which also proves the account is the
	// tenant's (the buckets have no tenant columns): one statement, so one
	// snapshot and one round trip.
	sum, args := `posted`, []any{}
	if at != nil {
		us := toMicros(*at)
		day, hour := ledgerBucketStart(us, LedgerBucketDay), ledgerBucketStart(us, LedgerBucketHour)
		sum = `CAST(
			(SELECT COALESCE(SUM(k.amount), 0) FROM ledger_posting_buckets k
				WHERE k.account_id = ? AND k.span = ? AND k.bucket_start < ?) +
			(SELECT COALESCE(SUM(k.amount), 0) FROM ledger_posting_buckets k
				WHERE k.account_id = ? AND k.span = ? AND k.bucket_start >= ? AND k.bucket_start < ?) +
			(SELECT COALESCE(SUM(p.amount), 0) FROM ledger_postings p
				WHERE p.account_id = ? AND NOT p.pending AND p.created_at >= ? AND p.created_at < ?)
			AS BIGINT)`
		args = []any{accountID, LedgerBucketDay, day, accountID, LedgerBucketHour, day, hour, accountID, hour, us}
	}
	var out int64
	err := q.queryRow(ctx, `SELECT `+sum+` FROM ledger_balances b WHERE b.platform_id = ? AND b.env = ? AND b.account_id = ?`,
		append(args, t.PlatformID, t.Env, accountID)...).Scan(&out)
	if errors.Is(err, sql.ErrNoRows) { // a hot account (no buckets, no statement), or not the tenant's
		return q.ledgerPostingSum(ctx, t, accountID, at)
	}
	return out, classify(err)
}

// ledgerPostingSum sums an account's posted postings before at (all when nil)
// one by one.
func (q Q) ledgerPostingSum(ctx context.Context, t Tenant, accountID string, at *time.Time) (int64, error) {
	w := where{}
	w.add("account_id = ?", accountID)
	w.add("NOT pending")
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if at != nil {
		w.add("created_at < ?", toMicros(*at))
	}
	var sum bigSum
	if err := q.queryRow(ctx, `SELECT `+splitSum("amount")+` FROM ledger_postings`+w.sql(), w.args...).Scan(&sum.hi, &sum.lo); err != nil {
		return 0, classify(err)
	}
	return sum.int64()
}

// RebuildLedgerPostingBuckets recomputes every bucket from the postings, for
// tools that write postings with SQL of their own.
func (db *DB) RebuildLedgerPostingBuckets(ctx context.Context) error {
	return db.InTx(ctx, func(tx *Tx) error {
		if tx.engine == Postgres {
			// A writer that added to a bucket before this lock commits first
			// (and its postings are then summed below); one that adds after
			// it waits, and adds to the rebuilt bucket.
			if _, err := tx.exec(ctx, "LOCK TABLE ledger_posting_buckets IN EXCLUSIVE MODE"); err != nil {
				return err
			}
		}
		if _, err := tx.exec(ctx, "DELETE FROM ledger_posting_buckets"); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO ledger_posting_buckets (account_id, span, bucket_start, amount)
			SELECT account_id, span, bucket_start, CAST(SUM(amount) AS BIGINT) FROM (`+ledgerPostingsByBucket+`) x
			GROUP BY account_id, span, bucket_start`)
		return err
	})
}

// LedgerBucketMismatch is a bucket that disagrees with its postings.
type LedgerBucketMismatch struct {
	AccountID   string
	Span        int64
	BucketStart int64
	Stored      int64 // the bucket's amount (0 when it is missing)
	Postings    int64 // the sum of its postings
}

// LedgerBucketMismatches lists the tenant's buckets whose amount is not the
// sum of their postings, missing buckets included (an audit: it reads every
// posting).
func (q Q) LedgerBucketMismatches(ctx context.Context, t Tenant) ([]LedgerBucketMismatch, error) {
	rows, err := q.query(ctx, `SELECT account_id, span, bucket_start,
			CAST(SUM(stored) AS BIGINT), CAST(SUM(summed) AS BIGINT)
		FROM (
			SELECT k.account_id, k.span, k.bucket_start, k.amount AS stored, 0 AS summed
			FROM ledger_posting_buckets k JOIN ledger_accounts a ON a.id = k.account_id
			WHERE a.platform_id = ? AND a.env = ?
			UNION ALL
			SELECT account_id, span, bucket_start, 0, amount FROM (`+ledgerPostingsByBucket+`
				AND p.platform_id = ? AND p.env = ?) x
		) u
		GROUP BY account_id, span, bucket_start HAVING SUM(stored) <> SUM(summed)
		ORDER BY account_id, span, bucket_start`, t.PlatformID, t.Env, t.PlatformID, t.Env)
	if err != nil {
		return nil, err
	}
	var out []LedgerBucketMismatch
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var m LedgerBucketMismatch
		err := r.Scan(&m.AccountID, &m.Span, &m.BucketStart, &m.Stored, &m.Postings)
		out = append(out, m)
		return err
	})
	return out, err
}
