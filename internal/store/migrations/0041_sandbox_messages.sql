-- Messages the sandbox records instead of sending (issue 17): one-time
-- codes to EMAIL_OTP and SMS_OTP credentials. Production sends through the
-- configured email and SMS adapters and records nothing here.
CREATE TABLE sandbox_messages (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    env         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    channel     TEXT NOT NULL,
    recipient   TEXT NOT NULL,
    subject     TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE INDEX sandbox_messages_by_recipient ON sandbox_messages (platform_id, env, recipient, created_at);
