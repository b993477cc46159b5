-- The event outbox: every event is written in the transaction of the change
-- that causes it, so a crash can neither lose nor invent one.

CREATE TABLE events (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    type         TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    envelope     TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);

CREATE INDEX events_by_tenant ON events (platform_id, env, id);
CREATE INDEX events_by_type ON events (platform_id, env, type, id);
CREATE INDEX events_by_resource ON events (platform_id, env, resource_id, id);
