-- Embedded-wallet authentication (issue 17): signed-retry requests,
-- credentials and sessions. Times are BIGINT microseconds (UTC).

-- A signed retry's first step: the exact request it must be repeated as
-- (method, path, SHA-256 of the body, the API token that sent it), the
-- wallet whose session keys may sign it, what it will do (operation and its
-- JSON params) and the payload the stamp must cover. status goes PENDING →
-- COMPLETED exactly once (PROCESSING in between when an approval gates the
-- operation); a COMPLETED request's id is burned.
CREATE TABLE signed_requests (
    id            TEXT PRIMARY KEY,
    platform_id   TEXT NOT NULL REFERENCES platforms (id),
    env           TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    token_id      TEXT NOT NULL,
    method        TEXT NOT NULL,
    path          TEXT NOT NULL,
    body_sha256   TEXT NOT NULL,
    account_id    TEXT NOT NULL,
    operation     TEXT NOT NULL,
    params        TEXT NOT NULL,
    payload       TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED')),
    result        TEXT NOT NULL DEFAULT '',
    expires_at    BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    completed_at  BIGINT
);

CREATE INDEX signed_requests_by_expiry ON signed_requests (expires_at);

-- Credentials on a wallet. nickname is the email (EMAIL_OTP), the E.164
-- phone number (SMS_OTP), the token's email or subject (OAUTH) or the
-- user's label (PASSKEY). identity is what must be unique among a tenant's
-- live credentials of the type: the email, the phone number, iss+sub, the
-- passkey's credential id. OTP state: the code's SHA-256 (never the code),
-- its expiry, attempts used, and the HPKE target key the code travels
-- under, sealed. details holds type-specific JSON (OAUTH iss/aud/sub,
-- PASSKEY credential).
CREATE TABLE wallet_credentials (
    id                TEXT PRIMARY KEY,
    platform_id       TEXT NOT NULL REFERENCES platforms (id),
    env               TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    account_id        TEXT NOT NULL REFERENCES internal_accounts (id),
    credential_type   TEXT NOT NULL CHECK (credential_type IN ('EMAIL_OTP', 'SMS_OTP', 'OAUTH', 'PASSKEY')),
    nickname          TEXT NOT NULL,
    identity          TEXT NOT NULL,
    details           TEXT NOT NULL DEFAULT '{}',
    otp_hash          TEXT NOT NULL DEFAULT '',
    otp_expires_at    BIGINT,
    otp_attempts      INTEGER NOT NULL DEFAULT 0,
    otp_target_sealed TEXT NOT NULL DEFAULT '',
    verified_at       BIGINT,
    revoked_at        BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);

CREATE INDEX wallet_credentials_by_account ON wallet_credentials (platform_id, env, account_id, id);

-- One live EMAIL_OTP and one live SMS_OTP per wallet.
CREATE UNIQUE INDEX wallet_credentials_one_otp ON wallet_credentials (account_id, credential_type)
    WHERE revoked_at IS NULL AND credential_type IN ('EMAIL_OTP', 'SMS_OTP');

-- An email, phone number, OAuth identity or passkey on one live credential
-- of the tenant.
CREATE UNIQUE INDEX wallet_credentials_identity ON wallet_credentials (platform_id, env, credential_type, identity)
    WHERE revoked_at IS NULL;

-- Sessions a verified credential opened: bound to the client's public key
-- (compressed SEC1 hex), valid until expires_at unless revoked.
CREATE TABLE wallet_sessions (
    id            TEXT PRIMARY KEY,
    platform_id   TEXT NOT NULL REFERENCES platforms (id),
    env           TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    account_id    TEXT NOT NULL REFERENCES internal_accounts (id),
    credential_id TEXT NOT NULL REFERENCES wallet_credentials (id),
    public_key    TEXT NOT NULL,
    expires_at    BIGINT NOT NULL,
    revoked_at    BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE INDEX wallet_sessions_by_account ON wallet_sessions (platform_id, env, account_id, public_key);
