-- Stablecoin issuance (issue 21): provider account links, registered
-- stablecoins, links of external accounts with a provider account, and the
-- issuer operations (mints and burns) with the durable state of their
-- background work.
--
-- stablecoin_provider_accounts.sealed_secret is the provider API secret
-- sealed by package stablecoins (AES-GCM under a data key kept in
-- server_secrets, itself sealed under the operator's key ring); it is never
-- returned. status: ACTIVE, INVALID or REVOKED.
CREATE TABLE stablecoin_provider_accounts (
    id                   TEXT PRIMARY KEY,
    platform_id          TEXT NOT NULL REFERENCES platforms (id),
    env                  TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    provider             TEXT NOT NULL,
    provider_account_id  TEXT NOT NULL,
    provider_environment TEXT NOT NULL,
    api_client_id        TEXT NOT NULL,
    sealed_secret        TEXT NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('ACTIVE', 'INVALID', 'REVOKED')),
    last_verified_at     BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);

CREATE INDEX stablecoin_provider_accounts_by_tenant ON stablecoin_provider_accounts (platform_id, env, id);

-- A symbol and a token identifier (per network) are unique per tenant
-- (R-STBL-08).
CREATE TABLE stablecoins (
    id                        TEXT PRIMARY KEY,
    platform_id               TEXT NOT NULL REFERENCES platforms (id),
    env                       TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    provider_account_id       TEXT NOT NULL REFERENCES stablecoin_provider_accounts (id),
    provider                  TEXT NOT NULL,
    provider_environment      TEXT NOT NULL,
    provider_token_identifier TEXT NOT NULL,
    network                   TEXT NOT NULL,
    network_token_identifier  TEXT NOT NULL,
    name                      TEXT NOT NULL,
    symbol                    TEXT NOT NULL,
    base_currency             TEXT NOT NULL,
    decimals                  INTEGER NOT NULL,
    issuance_status           TEXT NOT NULL,
    grid_operations_status    TEXT NOT NULL,
    created_at                BIGINT NOT NULL,
    updated_at                BIGINT NOT NULL
);

CREATE UNIQUE INDEX stablecoins_symbol ON stablecoins (platform_id, env, symbol);
CREATE UNIQUE INDEX stablecoins_token ON stablecoins (platform_id, env, network, network_token_identifier);

-- An external account known to a provider account (the provider's address
-- id for it), made on first use as a mint destination or burn destination.
CREATE TABLE stablecoin_links (
    provider_account_id TEXT NOT NULL REFERENCES stablecoin_provider_accounts (id),
    external_account_id TEXT NOT NULL,
    platform_id         TEXT NOT NULL,
    env                 TEXT NOT NULL,
    provider_address_id TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    PRIMARY KEY (provider_account_id, external_account_id)
);

CREATE INDEX stablecoin_links_by_external ON stablecoin_links (platform_id, env, external_account_id);

-- Issuer operations. due_at is when the background work next looks at the
-- operation (NULL once it is terminal); attempts and last_error record
-- failed steps, retried with backoff. fiat_transfer_id and token_transfer_id
-- are the ledger transfers the operation wrote.
CREATE TABLE stablecoin_operations (
    id                   TEXT PRIMARY KEY,
    platform_id          TEXT NOT NULL REFERENCES platforms (id),
    env                  TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    stablecoin_id        TEXT NOT NULL REFERENCES stablecoins (id),
    operation_type       TEXT NOT NULL CHECK (operation_type IN ('MINT', 'BURN')),
    status               TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    fiat_amount          BIGINT NOT NULL,
    provider_account_id  TEXT NOT NULL,
    provider_transfer_id TEXT NOT NULL,
    provider_status      TEXT NOT NULL,
    source               TEXT NOT NULL,
    destination          TEXT NOT NULL,
    funding_instructions TEXT NOT NULL,
    description          TEXT NOT NULL,
    failure_reason       TEXT NOT NULL,
    expires_at           BIGINT,
    due_at               BIGINT,
    attempts             INTEGER NOT NULL DEFAULT 0,
    last_error           TEXT NOT NULL DEFAULT '',
    fiat_transfer_id     TEXT NOT NULL DEFAULT '',
    token_transfer_id    TEXT NOT NULL DEFAULT '',
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);

CREATE INDEX stablecoin_operations_by_coin ON stablecoin_operations (platform_id, env, stablecoin_id, id);
CREATE INDEX stablecoin_operations_due ON stablecoin_operations (due_at) WHERE due_at IS NOT NULL;
