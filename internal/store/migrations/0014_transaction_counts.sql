-- Running counts of transactions, so that totalCount on GET /transactions
-- is O(1) for the common scopes instead of a COUNT(*) over the tenant's
-- rows on every page (docs/benchmarks.md, "Findings" 3).
--
-- scope is 'all' (the tenant), 'platform' (customer_id IS NULL) or
-- 'customer:<customer id>'. A count is SUM(n) over the scope's shards: 'all'
-- and 'platform' are written by many concurrent transfers, so each database
-- transaction adds to one shard picked at random instead of queueing on one
-- row; a customer's scope uses shard 0 only. The store adds to these rows in
-- the same database transaction as the insert (store/transaction_counts.go).
--
-- The backfill below is also what RebuildTransactionCounts replays.

CREATE TABLE transaction_counts (
    platform_id TEXT NOT NULL,
    env         TEXT NOT NULL,
    scope       TEXT NOT NULL,
    shard       INTEGER NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, scope, shard)
);

INSERT INTO transaction_counts (platform_id, env, scope, shard, n)
SELECT platform_id, env, 'all', 0, COUNT(*) FROM transactions GROUP BY platform_id, env;

INSERT INTO transaction_counts (platform_id, env, scope, shard, n)
SELECT platform_id, env, CASE WHEN customer_id IS NULL THEN 'platform' ELSE 'customer:' || customer_id END, 0, COUNT(*)
FROM transactions GROUP BY platform_id, env, customer_id;

-- The page of the platform's own transactions (customerId = the platform's
-- id), newest first. transactions_by_customer cannot give id order under
-- customer_id IS NULL on PostgreSQL, which then walks the tenant's rows
-- backwards on the primary key until it has found a page: the fewer the
-- platform's own, the longer the walk.
CREATE INDEX transactions_platform_own ON transactions (platform_id, env, id) WHERE customer_id IS NULL;
