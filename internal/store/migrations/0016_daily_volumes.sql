-- The daily volume limit (R-ERR-21) needs the tenant's executed volume of the
-- current UTC day on every transfer. Summing the day's quotes made each
-- transfer cost O(transfers today) (docs/benchmarks.md, Findings 1). Running
-- totals make it O(1), and let check and increment be one conditional
-- statement, so simultaneous transfers can no longer together pass the
-- limit. A day is split into shards (store/volumes.go) so that concurrent
-- transfers of one tenant do not queue on one row.
-- day is the UTC day number: executed_at (µs since the epoch) / 86400000000.

CREATE TABLE daily_volumes (
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    day          BIGINT NOT NULL,
    shard        INTEGER NOT NULL,
    usd          BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, day, shard)
);

-- Existing executions are spread evenly over the shards, as if they had
-- come in through them, so that no shard starts above its share.
INSERT INTO daily_volumes (platform_id, env, day, shard, usd)
SELECT v.platform_id, v.env, v.day, k.shard, v.total / 8 + CASE WHEN k.shard = 0 THEN v.total % 8 ELSE 0 END
FROM (SELECT platform_id, env, executed_at / 86400000000 AS day, CAST(SUM(usd_equivalent) AS BIGINT) AS total
      FROM quotes WHERE executed_at IS NOT NULL
      GROUP BY platform_id, env, executed_at / 86400000000) v
CROSS JOIN (SELECT 0 AS shard UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7) k;

-- Nothing sums executed quotes any more; their index only cost every
-- execution an index write.
DROP INDEX IF EXISTS quotes_executed_volume;
