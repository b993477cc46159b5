-- Agent deposits (issue 22, R-AGENT-35): a target (a Lightning invoice or a
-- chain address) an agent asks for so that money arrives in one of its
-- customer's internal accounts. PENDING until paid (COMPLETED, with the
-- INCOMING transaction that credited the account) or past expires_at
-- (EXPIRED).
CREATE TABLE agent_deposits (
    id             TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL REFERENCES platforms (id),
    env            TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    agent_id       TEXT NOT NULL REFERENCES agents (id),
    customer_id    TEXT NOT NULL REFERENCES customers (id),
    account_id     TEXT NOT NULL,
    target_type    TEXT NOT NULL,
    target         TEXT NOT NULL,
    network        TEXT NOT NULL DEFAULT '',
    amount         BIGINT,
    currency       TEXT NOT NULL,
    status         TEXT NOT NULL,
    transaction_id TEXT NOT NULL DEFAULT '',
    expires_at     BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE INDEX agent_deposits_by_agent ON agent_deposits (platform_id, env, agent_id, id);
