-- Single-use proofs of embedded-wallet credentials (issue 17): a passkey
-- registration challenge (the platform issues it; it registers one passkey)
-- and an OIDC ID token (it opens one session), kept as SHA-256 of their
-- bytes so that a second use is refused.
CREATE TABLE wallet_used_proofs (
    platform_id   TEXT NOT NULL REFERENCES platforms (id),
    env           TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    kind          TEXT NOT NULL CHECK (kind IN ('PASSKEY_CHALLENGE', 'OIDC_TOKEN')),
    digest        TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    used_at       BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env, kind, digest)
);
