-- The daily volume limit (R-ERR-21) needs the tenant's executed volume of the
-- current UTC day on every transfer. Summing the day's quotes made each
-- transfer cost O(transfers today) (docs/benchmarks.md, Findings 1); one
-- running total per tenant and day makes it one row, and lets the check and
-- the increment be one conditional statement, so two simultaneous transfers
-- can no longer both pass a limit that only one of them fits under.
-- day is the UTC day number: executed_at (µs since the epoch) / 86400000000.

CREATE TABLE daily_volumes (
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    day          BIGINT NOT NULL,
    usd          BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, day)
);

INSERT INTO daily_volumes (platform_id, env, day, usd)
SELECT platform_id, env, executed_at / 86400000000, CAST(SUM(usd_equivalent) AS BIGINT)
FROM quotes WHERE executed_at IS NOT NULL
GROUP BY platform_id, env, executed_at / 86400000000;
