-- The double-entry ledger (package ledger owns the rules).
--
-- ledger_transfers and ledger_postings are append-only: no row is ever
-- updated or deleted. A correction is a new REVERSAL transfer; a hold is a
-- HOLD transfer whose postings are pending, and it is resolved exactly once by
-- a later POST or VOID transfer that names it in hold_id (a unique index makes
-- "exactly once" hold on every engine under any concurrency).
--
-- ledger_balances keeps one row per non-hot account (every INTERNAL account
-- and the quiet SYSTEM ones), so the overdraft check is one conditional UPDATE
-- on one locked row. Hot SYSTEM accounts (world, clearing, fees, FX) have no
-- balance row: their balance is the sum of their postings, so concurrent
-- transfers never queue on them.
-- Amounts are BIGINT in the currency's smallest unit; times are BIGINT
-- microseconds since the Unix epoch (UTC).

CREATE TABLE ledger_accounts (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    env          TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    currency     TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('INTERNAL', 'SYSTEM')),
    hot          BOOLEAN NOT NULL DEFAULT FALSE,
    code         TEXT,
    name         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    CHECK (kind = 'SYSTEM' OR NOT hot)
);

CREATE UNIQUE INDEX ledger_accounts_by_code ON ledger_accounts (platform_id, env, code, currency) WHERE code IS NOT NULL;

CREATE INDEX ledger_accounts_by_tenant ON ledger_accounts (platform_id, env, id);

CREATE TABLE ledger_transfers (
    id                    TEXT PRIMARY KEY,
    platform_id           TEXT NOT NULL,
    env                   TEXT NOT NULL,
    kind                  TEXT NOT NULL CHECK (kind IN ('TRANSFER', 'HOLD', 'POST', 'VOID', 'REVERSAL')),
    hold_id               TEXT REFERENCES ledger_transfers (id),
    reverses_transfer_id  TEXT REFERENCES ledger_transfers (id),
    reference             TEXT NOT NULL DEFAULT '',
    metadata              TEXT,
    created_at            BIGINT NOT NULL
);

CREATE UNIQUE INDEX ledger_transfers_hold_once ON ledger_transfers (hold_id) WHERE hold_id IS NOT NULL;

CREATE UNIQUE INDEX ledger_transfers_reversal_once ON ledger_transfers (reverses_transfer_id) WHERE reverses_transfer_id IS NOT NULL;

CREATE INDEX ledger_transfers_by_tenant ON ledger_transfers (platform_id, env, created_at, id);

CREATE INDEX ledger_transfers_by_reference ON ledger_transfers (platform_id, env, reference) WHERE reference <> '';

CREATE TABLE ledger_postings (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    transfer_id  TEXT NOT NULL REFERENCES ledger_transfers (id),
    account_id   TEXT NOT NULL REFERENCES ledger_accounts (id),
    currency     TEXT NOT NULL,
    amount       BIGINT NOT NULL CHECK (amount <> 0),
    pending      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL
);

-- Statements (balance-changes) and hot balances: posted postings of one
-- account in time order.
CREATE INDEX ledger_postings_statement ON ledger_postings (account_id, created_at, id) WHERE NOT pending;

CREATE INDEX ledger_postings_pending ON ledger_postings (account_id) WHERE pending;

CREATE INDEX ledger_postings_by_transfer ON ledger_postings (transfer_id);

CREATE TABLE ledger_balances (
    account_id       TEXT PRIMARY KEY REFERENCES ledger_accounts (id),
    platform_id      TEXT NOT NULL,
    env              TEXT NOT NULL,
    posted           BIGINT NOT NULL DEFAULT 0,
    pending_debits   BIGINT NOT NULL DEFAULT 0 CHECK (pending_debits >= 0),
    pending_credits  BIGINT NOT NULL DEFAULT 0 CHECK (pending_credits >= 0),
    floor_zero       BOOLEAN NOT NULL,
    version          BIGINT NOT NULL DEFAULT 0,
    updated_at       BIGINT NOT NULL,
    -- Backstop for the service's conditional UPDATE: an account with a zero
    -- floor never stores a negative available balance.
    CHECK (NOT floor_zero OR posted - pending_debits >= 0)
);
