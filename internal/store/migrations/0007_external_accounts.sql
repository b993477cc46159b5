-- External accounts: the bank accounts and wallets outside the service that
-- customers and the platform are paid out to, their ownership verification
-- challenges, and the outcomes of hosted liveness checks waiting to be
-- applied. Package externalaccounts owns the rules. Times are BIGINT
-- microseconds since the Unix epoch (UTC).
--
-- Accounts are never removed: DELETE sets deleted_at. An account is unique
-- among the live accounts of its owner by fingerprint, the normalized data
-- that identifies it (routing and account number, IBAN, chain and address…).

CREATE TABLE external_accounts (
    id                      TEXT PRIMARY KEY,
    platform_id             TEXT NOT NULL REFERENCES platforms (id),
    env                     TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    -- NULL for the platform's own accounts.
    customer_id             TEXT REFERENCES customers (id),
    -- customer_id, or '' for the platform: the owner duplicates are sought in.
    owner_key               TEXT NOT NULL,
    account_type            TEXT NOT NULL,
    currency                TEXT NOT NULL,
    fingerprint             TEXT NOT NULL,
    platform_account_id     TEXT NOT NULL,
    ownership_type          TEXT NOT NULL DEFAULT '',
    self_custody            BOOLEAN NOT NULL DEFAULT FALSE,
    status                  TEXT NOT NULL CHECK (status IN ('ACTIVE', 'PENDING_OWNERSHIP_VERIFICATION', 'UNVERIFIED')),
    -- US accounts: PENDING, VALIDATED or FAILED; '' for other types.
    bank_validation         TEXT NOT NULL DEFAULT '',
    bank_validation_reason  TEXT NOT NULL DEFAULT '',
    -- Trusted beneficiary (strong customer authentication), and the trust
    -- change (TRUST or UNTRUST) waiting for its confirmation, if any.
    trusted                 BOOLEAN NOT NULL DEFAULT FALSE,
    trust_change            TEXT NOT NULL DEFAULT '',
    trust_challenge_id      TEXT NOT NULL DEFAULT '',
    trust_expires_at        BIGINT,
    default_uma_deposit     BOOLEAN NOT NULL DEFAULT FALSE,
    -- accountInfo as accepted, JSON.
    account_info            TEXT NOT NULL,
    deleted_at              BIGINT,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);

CREATE UNIQUE INDEX external_accounts_live_fingerprint ON external_accounts (platform_id, env, owner_key, fingerprint) WHERE deleted_at IS NULL;

CREATE INDEX external_accounts_by_tenant ON external_accounts (platform_id, env, id);

CREATE INDEX external_accounts_by_customer ON external_accounts (platform_id, env, customer_id, id);

-- Ownership verification challenges. At most one per account is current
-- (OPEN, or RECORDED while a liveness outcome waits to be applied); a new
-- challenge moves the current one to ABANDONED. A WALLET_SIGNATURE challenge
-- ends VERIFIED or FAILED; a LIVENESS one is RECORDED when the person
-- finishes the hosted check and COMPLETED when the outcome (PASS or FAIL)
-- has been applied, after apply_after. Only a SHA-256 of a liveness link's
-- token is kept.
CREATE TABLE external_account_challenges (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES external_accounts (id),
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    method       TEXT NOT NULL CHECK (method IN ('WALLET_SIGNATURE', 'LIVENESS')),
    message      TEXT NOT NULL DEFAULT '',
    token_hash   TEXT,
    state        TEXT NOT NULL CHECK (state IN ('OPEN', 'ABANDONED', 'VERIFIED', 'FAILED', 'RECORDED', 'COMPLETED')),
    outcome      TEXT NOT NULL DEFAULT '',
    apply_after  BIGINT,
    expires_at   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);

CREATE UNIQUE INDEX external_account_challenges_by_token ON external_account_challenges (token_hash);

CREATE INDEX external_account_challenges_by_account ON external_account_challenges (account_id, state);

CREATE INDEX external_account_challenges_due ON external_account_challenges (state, apply_after);
