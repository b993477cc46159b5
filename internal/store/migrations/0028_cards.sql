-- Cards (issue 18): virtual cards issued to a platform's verified customers,
-- funded from one of the customer's internal accounts.
--
-- The card number is stored only sealed (sealed_pan: AES-256-GCM under the
-- key ring's key-encryption key, with the table and card id as associated
-- data); last4 and the expiry are kept in clear. No CVV and no PIN are ever
-- stored here.
--
-- funding_source is '' once the card is CLOSED (the funding is detached);
-- funding_binding_id names the current binding (CardFundingSource:…), which
-- delegated keys refer to.
--
-- provision_due_at: while PROCESSING, when the issuer adapter is next asked
-- (the issuance runner claims due cards by pushing it forward); NULL after.
CREATE TABLE cards (
    id                        TEXT PRIMARY KEY,
    platform_id               TEXT NOT NULL REFERENCES platforms (id),
    env                       TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id               TEXT NOT NULL REFERENCES customers (id),
    platform_card_id          TEXT NOT NULL,
    status                    TEXT NOT NULL CHECK (status IN ('PROCESSING', 'ACTIVE', 'FROZEN', 'PENDING_AUTH', 'PENDING_KYC', 'CLOSED')),
    status_reason             TEXT NOT NULL DEFAULT '',
    form                      TEXT NOT NULL,
    brand                     TEXT NOT NULL,
    currency                  TEXT NOT NULL,
    funding_source            TEXT NOT NULL DEFAULT '',
    funding_binding_id        TEXT NOT NULL DEFAULT '',
    last4                     TEXT NOT NULL,
    exp_month                 INTEGER NOT NULL,
    exp_year                  INTEGER NOT NULL,
    sealed_pan                TEXT NOT NULL,
    max_spend_per_transaction BIGINT,
    max_spend_per_day         BIGINT,
    max_transactions_per_day  BIGINT,
    allowed_mccs              TEXT NOT NULL DEFAULT '',
    blocked_mccs              TEXT NOT NULL DEFAULT '',
    processor_ref             TEXT NOT NULL DEFAULT '',
    issuer_ref                TEXT NOT NULL DEFAULT '',
    provision_due_at          BIGINT,
    provision_attempts        INTEGER NOT NULL DEFAULT 0,
    created_at                BIGINT NOT NULL,
    updated_at                BIGINT NOT NULL
);

CREATE INDEX cards_by_tenant ON cards (platform_id, env, id);
CREATE INDEX cards_by_customer ON cards (platform_id, env, customer_id, id);
CREATE INDEX cards_by_funding ON cards (platform_id, env, funding_source, id);
CREATE INDEX cards_provisioning ON cards (provision_due_at) WHERE status = 'PROCESSING';
