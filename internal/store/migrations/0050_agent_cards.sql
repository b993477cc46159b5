-- Agents' purchase cards (issue 22, R-AGENT-37..43): a card an agent issued
-- is an ordinary card with the agent that owns it and its purchase kind.
-- agent_id is '' for cards a platform issued. agent_kind is SINGLE_USE (the
-- card closes after its one purchase) or MERCHANT_LOCKED (the card keeps to
-- the first merchant that authorizes, whose descriptor locked_merchant
-- holds once an authorization is approved).
ALTER TABLE cards ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE cards ADD COLUMN agent_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE cards ADD COLUMN locked_merchant TEXT NOT NULL DEFAULT '';

CREATE INDEX cards_by_agent ON cards (platform_id, env, agent_id, id) WHERE agent_id <> '';

-- The audit of what agents did with card data (R-AGENT-43): one row per
-- reveal URL handed to an agent, with the agent as actor. Rows are only
-- ever inserted.
CREATE TABLE agent_card_audit (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    env         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    card_id     TEXT NOT NULL REFERENCES cards (id),
    actor_type  TEXT NOT NULL,
    actor_id    TEXT NOT NULL,
    action      TEXT NOT NULL,
    expires_at  BIGINT,
    created_at  BIGINT NOT NULL
);

CREATE INDEX agent_card_audit_by_card ON agent_card_audit (platform_id, env, card_id, id);
