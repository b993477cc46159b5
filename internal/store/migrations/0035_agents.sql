-- Agents (issue 22): programs that act for one customer of a platform,
-- inside a policy the platform sets. The policy is stored as its JSON
-- document (package agents validates it); its spending-limits currency never
-- changes after creation. The access token is stored only as a SHA-256 hash
-- (256-bit random value) and identifies the agent on every request, so it is
-- unique across tenants. A deleted agent keeps its row (actions refer to it)
-- with deleted_at set and no token.
CREATE TABLE agents (
    id            TEXT PRIMARY KEY,
    platform_id   TEXT NOT NULL REFERENCES platforms (id),
    env           TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id   TEXT NOT NULL REFERENCES customers (id),
    name          TEXT NOT NULL,
    paused        BOOLEAN NOT NULL DEFAULT FALSE,
    policy        TEXT NOT NULL,
    token_hash    TEXT NOT NULL DEFAULT '',
    connected_at  BIGINT,
    deleted_at    BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE INDEX agents_by_tenant ON agents (platform_id, env, id);
CREATE UNIQUE INDEX agents_by_token ON agents (token_hash) WHERE token_hash <> '';

-- Device codes (RFC 8628-shaped user codes): stored as keyed hashes of the
-- normalized code, single use, expiring. invalidated_at is set when a newer
-- code replaces an unredeemed one.
CREATE TABLE agent_device_codes (
    code_hash      TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL REFERENCES platforms (id),
    env            TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    agent_id       TEXT NOT NULL REFERENCES agents (id),
    expires_at     BIGINT NOT NULL,
    redeemed_at    BIGINT,
    invalidated_at BIGINT,
    created_at     BIGINT NOT NULL
);

CREATE INDEX agent_device_codes_by_agent ON agent_device_codes (agent_id, created_at);

-- Spending counted against the policy: one row per agent and period
-- ('D:YYYY-MM-DD' for the UTC day, 'M:YYYY-MM' for the UTC month), added to
-- only by a conditional UPDATE in the execution's transaction.
CREATE TABLE agent_usage (
    agent_id  TEXT NOT NULL REFERENCES agents (id),
    period    TEXT NOT NULL,
    spent     BIGINT NOT NULL DEFAULT 0,
    txn_count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, period)
);

-- Agent actions: every operation an agent submits. needs_approval marks
-- the ones the policy sent to the platform (GET /agents/approvals).
CREATE TABLE agent_actions (
    id               TEXT PRIMARY KEY,
    platform_id      TEXT NOT NULL REFERENCES platforms (id),
    env              TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    agent_id         TEXT NOT NULL REFERENCES agents (id),
    customer_id      TEXT NOT NULL,
    type             TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED')),
    needs_approval   BOOLEAN NOT NULL,
    quote_id         TEXT NOT NULL DEFAULT '',
    transaction_id   TEXT NOT NULL DEFAULT '',
    amount           BIGINT NOT NULL DEFAULT 0,
    details          TEXT NOT NULL DEFAULT '{}',
    rejection_reason TEXT NOT NULL DEFAULT '',
    failure_reason   TEXT NOT NULL DEFAULT '',
    expires_at       BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);

CREATE INDEX agent_actions_by_agent ON agent_actions (platform_id, env, agent_id, id);
CREATE INDEX agent_actions_approvals ON agent_actions (platform_id, env, needs_approval, created_at, id);
CREATE INDEX agent_actions_due ON agent_actions (status, expires_at);
CREATE INDEX agent_actions_by_quote ON agent_actions (platform_id, env, quote_id);
