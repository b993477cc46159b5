-- Running counts of events, so that totalCount on GET /events is O(1) when
-- the list is filtered by nothing or by type alone, instead of a COUNT(*)
-- over the tenant's events (kept at least 30 days: two or more a
-- transaction) on every page (docs/benchmarks.md, "Twenty-seventh session").
--
-- One row set per event type; the tenant's count is the SUM over its types.
-- Every transfer adds to these rows, so, like transaction_counts' 'all'
-- scope, each database transaction adds to one shard; purging events
-- subtracts in the same database transaction (store/event_counts.go).
--
-- The backfill below is also what RebuildCounts replays.

CREATE TABLE event_counts (
    platform_id TEXT NOT NULL,
    env         TEXT NOT NULL,
    type        TEXT NOT NULL,
    shard       INTEGER NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, type, shard)
);

INSERT INTO event_counts (platform_id, env, type, shard, n)
SELECT platform_id, env, type, 0, COUNT(*) FROM events GROUP BY platform_id, env, type;
