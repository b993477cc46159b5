-- transaction_counts (0014) split by transaction type and status, so that
-- totalCount on GET /transactions filtered by type, by status or by both
-- (alone, or with one customer or the platform's own) is a SUM over
-- counter rows too. At 1M transactions a page filtered so took 155 ms on
-- PostgreSQL, the COUNT(*) of its total, against 0.9 ms unfiltered
-- (docs/benchmarks.md, "Twenty-eighth session").
--
-- scope is as in 0014: 'all', 'platform' or 'customer:<customer id>'. A
-- scope's count is the SUM over its types, statuses and shards. A status
-- change moves one from the old status's row to the new one's in the
-- database transaction that makes it (store/transaction_counts.go); those
-- deltas land on whichever shard the transaction picked, so a single row
-- may be negative: only the sums mean anything.
--
-- The backfill below is also what RebuildCounts replays.

DROP TABLE IF EXISTS transaction_counts;

CREATE TABLE transaction_counts (
    platform_id      TEXT NOT NULL,
    env              TEXT NOT NULL,
    scope            TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    status           TEXT NOT NULL,
    shard            INTEGER NOT NULL,
    n                BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, scope, transaction_type, status, shard)
);

INSERT INTO transaction_counts (platform_id, env, scope, transaction_type, status, shard, n)
SELECT platform_id, env, 'all', transaction_type, status, 0, COUNT(*) FROM transactions
GROUP BY platform_id, env, transaction_type, status;

INSERT INTO transaction_counts (platform_id, env, scope, transaction_type, status, shard, n)
SELECT platform_id, env, CASE WHEN customer_id IS NULL THEN 'platform' ELSE 'customer:' || customer_id END,
    transaction_type, status, 0, COUNT(*)
FROM transactions GROUP BY platform_id, env, customer_id, transaction_type, status;
