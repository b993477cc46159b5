-- Webhook delivery (package webhooks owns the rules; docs/architecture-webhooks.md).
-- Times are BIGINT microseconds since the Unix epoch (UTC).

-- One row per event to deliver, inserted by events.Emit in the transaction
-- that writes the event. Workers lease a row (lease_token, lease_until) for
-- one attempt, make the HTTP request outside any transaction, then record the
-- outcome only if they still hold the lease. A dead worker's lease expires and
-- another worker takes the row over.
CREATE TABLE webhook_deliveries (
    event_id         TEXT PRIMARY KEY,
    platform_id      TEXT NOT NULL,
    env              TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('PENDING', 'DELIVERED', 'FAILED', 'SKIPPED')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    window_start     BIGINT NOT NULL,
    next_attempt_at  BIGINT NOT NULL,
    lease_token      TEXT,
    lease_until      BIGINT,
    delivered_at     BIGINT,
    updated_at       BIGINT NOT NULL
);

-- What the workers poll: due rows only, oldest first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, event_id) WHERE state = 'PENDING';

-- Counting a tenant's deliveries in flight (the per-tenant concurrency cap).
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (platform_id, env, lease_until) WHERE lease_until IS NOT NULL;

-- Every attempt, as shown by GET /events/{eventId}.
CREATE TABLE webhook_attempts (
    id                TEXT PRIMARY KEY,
    event_id          TEXT NOT NULL,
    platform_id       TEXT NOT NULL,
    env               TEXT NOT NULL,
    attempted_at      BIGINT NOT NULL,
    url               TEXT NOT NULL,
    status_code       INTEGER,
    latency_ms        BIGINT NOT NULL,
    response_excerpt  TEXT NOT NULL,
    error             TEXT NOT NULL
);

CREATE INDEX webhook_attempts_by_event ON webhook_attempts (event_id, id);

-- Standard Webhooks secrets per tenant. The current secret has no expiry; a
-- rotated-out secret keeps signing until expires_at (the overlap).
CREATE TABLE webhook_secrets (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    secret       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT
);

CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets (platform_id, env) WHERE expires_at IS NULL;

CREATE INDEX webhook_secrets_by_tenant ON webhook_secrets (platform_id, env, created_at);

-- The installation's P-256 key for X-Service-Signature, made on first start.
CREATE TABLE webhook_signing_keys (
    name         TEXT PRIMARY KEY,
    private_pem  TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);

-- Retention purges events by age.
CREATE INDEX events_by_age ON events (created_at);
