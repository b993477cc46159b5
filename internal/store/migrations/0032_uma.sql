-- UMA (issue 20): customer addresses and the institution's keys.
--
-- uma_addresses reserves one customer's address ($local@domain) under the
-- platform's UMA domain. The pair (domain, local_part) is unique across the
-- installation: the public discovery endpoint /.well-known/lnurlp/{user}
-- resolves a request's Host and user to exactly one customer of one tenant.
CREATE TABLE uma_addresses (
    domain      TEXT NOT NULL,
    local_part  TEXT NOT NULL,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    env         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (domain, local_part)
);

CREATE INDEX uma_addresses_by_customer ON uma_addresses (platform_id, env, customer_id);

-- The institution's UMA keys, one set per platform and environment: a
-- secp256k1 signing key and encryption key, each certified by a certificate
-- chain (PEM, leaf first) under the tenant's own CA. Private keys are stored
-- only sealed (package uma, with the tenant and the key's purpose as
-- associated data).
CREATE TABLE uma_keys (
    platform_id            TEXT NOT NULL REFERENCES platforms (id),
    env                    TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    signing_cert_chain     TEXT NOT NULL,
    encryption_cert_chain  TEXT NOT NULL,
    sealed_signing_key     TEXT NOT NULL,
    sealed_encryption_key  TEXT NOT NULL,
    created_at             BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env)
);

-- Receiver lookups made by this institution (GET /receiver/uma/{address}):
-- what the counterparty answered, kept for the quote that names lookup_id.
CREATE TABLE uma_lookups (
    id               TEXT PRIMARY KEY,
    platform_id      TEXT NOT NULL REFERENCES platforms (id),
    env              TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id      TEXT NOT NULL,
    sender_address   TEXT NOT NULL,
    receiver_address TEXT NOT NULL,
    sending_currency TEXT NOT NULL,
    lnurlp_response  TEXT NOT NULL,
    pubkey_response  TEXT NOT NULL,
    created_at       BIGINT NOT NULL
);
