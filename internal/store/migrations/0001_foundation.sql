-- Tenancy, credentials, platform configuration, idempotency and server secrets.
-- Times are BIGINT microseconds since the Unix epoch (UTC).

CREATE TABLE platforms (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    is_default  BOOLEAN NOT NULL DEFAULT FALSE,
    regulated   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  BIGINT NOT NULL
);

CREATE UNIQUE INDEX platforms_single_default ON platforms (is_default) WHERE is_default;

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    env          TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    client_id    TEXT NOT NULL UNIQUE,
    secret_hash  TEXT NOT NULL,
    name         TEXT NOT NULL,
    permissions  TEXT NOT NULL,
    expires_at   BIGINT,
    deleted_at   BIGINT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);

CREATE INDEX api_tokens_by_tenant ON api_tokens (platform_id, env, id);

CREATE TABLE platform_configs (
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    env          TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    id           TEXT NOT NULL UNIQUE,
    document     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env)
);

CREATE TABLE idempotency_keys (
    platform_id    TEXT NOT NULL,
    env            TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    request_hash   TEXT NOT NULL,
    lock_token     TEXT NOT NULL,
    locked_until   BIGINT NOT NULL,
    status_code    INTEGER NOT NULL DEFAULT 0,
    response_body  TEXT,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, idem_key)
);

CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

CREATE TABLE server_secrets (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
