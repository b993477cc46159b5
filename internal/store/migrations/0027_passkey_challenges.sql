-- Passkey registration challenges already used (issue 17): the platform
-- issues the WebAuthn challenge of a registration, and a challenge may
-- register one passkey only. Kept as SHA-256 of the challenge bytes.
CREATE TABLE passkey_registration_challenges (
    platform_id      TEXT NOT NULL REFERENCES platforms (id),
    env              TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    challenge_sha256 TEXT NOT NULL,
    credential_id    TEXT NOT NULL,
    used_at          BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, challenge_sha256)
);
