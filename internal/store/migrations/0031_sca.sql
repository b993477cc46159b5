-- Strong customer authentication (issue 19). Times are BIGINT microseconds
-- (UTC).

-- One row per customer who has SCA state: the document (package sca) holds
-- the enrolled factors (TOTP secrets sealed, one-time codes only as SHA-256),
-- attempt counters and locks, the login session's expiry, the pending SMS
-- login challenge and the factor resets. The row is locked while it changes.
CREATE TABLE sca_customers (
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    env         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id TEXT NOT NULL,
    document    TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, customer_id)
);

-- Challenges a quote carries until authorized. binding is the SHA-256 of
-- what the challenge authorizes (quote, payee, amount and currency: dynamic
-- linking); status PENDING → AUTHORIZED or FAILED. step/steps number a
-- sequence of challenges on one quote.
CREATE TABLE sca_challenges (
    id             TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL REFERENCES platforms (id),
    env            TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id    TEXT NOT NULL,
    quote_id       TEXT NOT NULL,
    purpose        TEXT NOT NULL,
    factor         TEXT NOT NULL,
    binding        TEXT NOT NULL,
    code_hash      TEXT NOT NULL DEFAULT '',
    step           INTEGER NOT NULL,
    steps          INTEGER NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('PENDING', 'AUTHORIZED', 'FAILED')),
    document       TEXT NOT NULL,
    expires_at     BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE INDEX sca_challenges_by_quote ON sca_challenges (platform_id, env, quote_id, step);

-- Every SCA decision (login, enrolment, authorization, exemption, lock,
-- reset, recorded security event) with the factor used: the platform's
-- audit trail (GET /sca/decisions).
CREATE TABLE sca_decisions (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    env          TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    factor       TEXT NOT NULL DEFAULT '',
    outcome      TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    quote_id     TEXT NOT NULL DEFAULT '',
    challenge_id TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);

CREATE INDEX sca_decisions_by_customer ON sca_decisions (platform_id, env, customer_id, created_at, id);

-- The platform's SCA settings (additional regions, exemptions) as JSON.
CREATE TABLE sca_settings (
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    env         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    document    TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env)
);
