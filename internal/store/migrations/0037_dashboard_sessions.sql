-- Dashboard sign-in sessions (internal/dashboard). The session id is a
-- 256-bit random value kept only in the browser's cookie; the row holds its
-- SHA-256. Each request re-reads the API token the session was opened with,
-- so revoking the token ends the session on every node.
CREATE TABLE dashboard_sessions (
    id_hash       TEXT PRIMARY KEY,
    platform_id   TEXT NOT NULL,
    env           TEXT NOT NULL,
    token_id      TEXT NOT NULL,
    csrf_token    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);

CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at);
