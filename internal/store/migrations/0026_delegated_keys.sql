-- Delegated signing keys (issue 17): a P-256 key the service generates and
-- custodies for a card or an agent to sign on an embedded wallet's behalf.
-- Exactly one of card_id and agent_id is set; funding_source_id only with a
-- card. The private key is stored only sealed (package wallets), never
-- returned. status: PENDING, ACTIVE or REVOKED.
CREATE TABLE delegated_keys (
    id                 TEXT PRIMARY KEY,
    platform_id        TEXT NOT NULL REFERENCES platforms (id),
    env                TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    account_id         TEXT NOT NULL REFERENCES internal_accounts (id),
    card_id            TEXT NOT NULL DEFAULT '',
    funding_source_id  TEXT NOT NULL DEFAULT '',
    agent_id           TEXT NOT NULL DEFAULT '',
    public_key         TEXT NOT NULL,
    sealed_private_key TEXT NOT NULL,
    nickname           TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'REVOKED')),
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    CHECK ((card_id = '') <> (agent_id = ''))
);

CREATE INDEX delegated_keys_by_account ON delegated_keys (platform_id, env, account_id, id);
CREATE INDEX delegated_keys_by_funding_source ON delegated_keys (platform_id, env, funding_source_id, id);
