-- Internal accounts, transactions and statement receipts. Packages accounts
-- and transactions own the rules. Amounts are BIGINT in the currency's
-- smallest unit; times are BIGINT microseconds since the Unix epoch (UTC).
--
-- An internal account is the API face of one INTERNAL ledger account (which
-- never goes negative): balances are never stored here, they are read from
-- the ledger. The ledger account has the internal account's id and is created
-- in the same transaction; the foreign key is checked at commit so either
-- row may be written first.
--
-- INTERNAL_FIAT and INTERNAL_CRYPTO accounts are provisioned: one per owner
-- (a customer, or the platform when customer_id is NULL), type and currency,
-- which the partial unique index enforces so that "create if missing" is an
-- INSERT … ON CONFLICT DO NOTHING that is safe under any concurrency.
-- RULE_BASED accounts are created by the platform, as many as it likes.

CREATE TABLE internal_accounts (
    id                          TEXT PRIMARY KEY,
    platform_id                 TEXT NOT NULL REFERENCES platforms (id),
    env                         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    -- NULL for the platform's own accounts.
    customer_id                 TEXT REFERENCES customers (id),
    -- customer_id, or '' for the platform.
    owner_key                   TEXT NOT NULL,
    account_type                TEXT NOT NULL CHECK (account_type IN ('INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET', 'RULE_BASED')),
    currency                    TEXT NOT NULL,
    status                      TEXT NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'CLOSED', 'FROZEN', 'FAILED')),
    ledger_account_id           TEXT NOT NULL UNIQUE REFERENCES ledger_accounts (id) DEFERRABLE INITIALLY DEFERRED,
    -- The reference a depositor quotes so a deposit is credited to this
    -- account; unique per tenant.
    funding_reference           TEXT NOT NULL,
    -- fundingPaymentInstructions as served, JSON.
    funding_instructions        TEXT NOT NULL,
    -- RULE_BASED only: where incoming money is swept to.
    rule_destination_account_id TEXT REFERENCES internal_accounts (id),
    created_at                  BIGINT NOT NULL,
    updated_at                  BIGINT NOT NULL
);

CREATE UNIQUE INDEX internal_accounts_provisioned ON internal_accounts (platform_id, env, owner_key, account_type, currency)
    WHERE account_type IN ('INTERNAL_FIAT', 'INTERNAL_CRYPTO');

CREATE UNIQUE INDEX internal_accounts_by_reference ON internal_accounts (platform_id, env, funding_reference);

CREATE INDEX internal_accounts_by_owner ON internal_accounts (platform_id, env, owner_key, id);

-- Transactions: what the API reports about money that moved (issue 5 adds
-- outgoing payments and quotes). source and destination are the API objects
-- as JSON; the columns beside them are what lists filter on. ledger_transfer_id
-- is the ledger transfer that moved the money (its reference is this id).

CREATE TABLE transactions (
    id                     TEXT PRIMARY KEY,
    platform_id            TEXT NOT NULL REFERENCES platforms (id),
    env                    TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    transaction_type       TEXT NOT NULL CHECK (transaction_type IN ('INCOMING', 'OUTGOING', 'CARD')),
    status                 TEXT NOT NULL,
    direction              TEXT NOT NULL CHECK (direction IN ('CREDIT', 'DEBIT')),
    -- NULL when the platform's own account is the one concerned.
    customer_id            TEXT REFERENCES customers (id),
    -- The internal account the transaction credits or debits, and the
    -- account ids of both sides (either may be '').
    account_id             TEXT NOT NULL,
    source_account_id      TEXT NOT NULL DEFAULT '',
    destination_account_id TEXT NOT NULL DEFAULT '',
    source                 TEXT NOT NULL,
    destination            TEXT NOT NULL,
    sent_amount            BIGINT NOT NULL,
    sent_currency          TEXT NOT NULL,
    received_amount        BIGINT,
    received_currency      TEXT NOT NULL DEFAULT '',
    fees                   BIGINT NOT NULL DEFAULT 0 CHECK (fees >= 0),
    rule_based_account_id  TEXT NOT NULL DEFAULT '',
    card_id                TEXT NOT NULL DEFAULT '',
    quote_id               TEXT NOT NULL DEFAULT '',
    reference              TEXT NOT NULL DEFAULT '',
    description            TEXT NOT NULL DEFAULT '',
    failure_reason         TEXT NOT NULL DEFAULT '',
    ledger_transfer_id     TEXT REFERENCES ledger_transfers (id),
    settled_at             BIGINT,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL
);

CREATE INDEX transactions_by_tenant ON transactions (platform_id, env, id);

CREATE INDEX transactions_by_customer ON transactions (platform_id, env, customer_id, id);

CREATE INDEX transactions_by_account ON transactions (platform_id, env, account_id, id);

CREATE INDEX transactions_by_rule_based_account ON transactions (platform_id, env, rule_based_account_id) WHERE rule_based_account_id <> '';

CREATE INDEX transactions_by_reference ON transactions (platform_id, env, reference) WHERE reference <> '';

-- Monthly statements of a customer's USD account: when the platform first
-- fetched the exact US Central month (balance-changes over that month), and
-- when it first confirmed delivery to the customer (confirm-statement). Both
-- keep their first value.
CREATE TABLE statement_receipts (
    account_id    TEXT NOT NULL REFERENCES internal_accounts (id),
    platform_id   TEXT NOT NULL,
    env           TEXT NOT NULL,
    -- YYYY-MM, a US Central calendar month.
    month         TEXT NOT NULL,
    fetched_at    BIGINT,
    confirmed_at  BIGINT,
    PRIMARY KEY (account_id, month)
);
