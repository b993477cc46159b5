-- Rail jobs: the durable work of package rails. One row per payout carried
-- over a rail (kind PAYOUT, enqueued by rails.Submit in the transaction that
-- executed the quote) and per sandbox incoming bank deposit (kind INCOMING,
-- kept so that it can later be returned, dishonored or contested).
--
-- data is the job's state as JSON (the payout, the railDetails as last
-- reported, the ledger transfers written so far), owned by package rails.
-- step is the index of the next step of the payout's plan; a PENDING job's
-- step is applied when due_at passes. Every change bumps version, and a step
-- is applied only by an UPDATE that names the version it read, in the same
-- database transaction as its ledger transfers and transaction change: a
-- step is applied at most once whatever crashes or races. A worker holds a
-- job while it works through lease_token/lease_until, as webhook deliveries
-- are held, so two workers do not even try the same step at once.

CREATE TABLE rail_jobs (
    id             TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL REFERENCES platforms (id),
    env            TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    transaction_id TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('PAYOUT', 'INCOMING')),
    rail           TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('PENDING', 'DONE', 'CANCELLED')),
    data           TEXT NOT NULL,
    step           INTEGER NOT NULL DEFAULT 0,
    version        INTEGER NOT NULL DEFAULT 0,
    due_at         BIGINT NOT NULL,
    lease_token    TEXT,
    lease_until    BIGINT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    last_error     TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE UNIQUE INDEX rail_jobs_by_transaction ON rail_jobs (platform_id, env, transaction_id);

CREATE INDEX rail_jobs_due ON rail_jobs (due_at, id) WHERE state = 'PENDING';
