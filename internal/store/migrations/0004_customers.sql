-- Customers, their agreement consents, contact-verification codes, beneficial
-- owners, verification documents (metadata) and KYC/KYB verifications.
-- Package customers owns the rules. Times are BIGINT microseconds (UTC).
--
-- Customers are never removed: DELETE sets deleted_at, so history stays
-- readable for audits. platform_customer_id is unique among live customers
-- only, so a deleted customer's id can be reused.

CREATE TABLE customers (
    id                      TEXT PRIMARY KEY,
    platform_id             TEXT NOT NULL REFERENCES platforms (id),
    env                     TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    platform_customer_id    TEXT NOT NULL,
    customer_type           TEXT NOT NULL CHECK (customer_type IN ('INDIVIDUAL', 'BUSINESS')),
    -- kycStatus of an individual, kybStatus of a business.
    status                  TEXT NOT NULL,
    region                  TEXT NOT NULL DEFAULT '',
    -- ",USD,EUR," so that a currency filter is one LIKE on both engines.
    currencies              TEXT NOT NULL DEFAULT '',
    -- The customer's data (names, address, business info, EDD…) as JSON.
    profile                 TEXT NOT NULL,
    -- The email address and phone number last confirmed with a one-time code;
    -- a channel is VERIFIED while the current value equals the confirmed one.
    email_verified          TEXT,
    phone_verified          TEXT,
    -- Sandbox: a business whose registration number ends in 002 reports
    -- errors once before it is rejected.
    registry_error_reported BOOLEAN NOT NULL DEFAULT FALSE,
    -- The verification whose manual review is in progress, if any.
    review_verification_id  TEXT,
    deleted_at              BIGINT,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);

CREATE UNIQUE INDEX customers_live_platform_customer_id ON customers (platform_id, env, platform_customer_id) WHERE deleted_at IS NULL;

CREATE INDEX customers_by_tenant ON customers (platform_id, env, id);

-- One consent per agreement type and customer; a new consent replaces the old.
CREATE TABLE customer_agreements (
    customer_id        TEXT NOT NULL REFERENCES customers (id),
    agreement_type     TEXT NOT NULL,
    platform_id        TEXT NOT NULL,
    env                TEXT NOT NULL,
    terms_version      TEXT NOT NULL,
    accepted_at        BIGINT NOT NULL,
    ip_address         TEXT NOT NULL,
    acceptance_method  TEXT NOT NULL,
    recorded_at        BIGINT NOT NULL,
    PRIMARY KEY (customer_id, agreement_type)
);

-- The outstanding one-time code of a channel. Only an HMAC of the code is
-- kept. sends/window_start limit how often codes are sent.
CREATE TABLE customer_contact_codes (
    customer_id   TEXT NOT NULL REFERENCES customers (id),
    channel       TEXT NOT NULL CHECK (channel IN ('EMAIL', 'PHONE')),
    platform_id   TEXT NOT NULL,
    env           TEXT NOT NULL,
    destination   TEXT NOT NULL,
    salt          TEXT NOT NULL,
    code_hash     TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    expires_at    BIGINT NOT NULL,
    sends         INTEGER NOT NULL,
    window_start  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (customer_id, channel)
);

CREATE TABLE beneficial_owners (
    id                      TEXT PRIMARY KEY,
    platform_id             TEXT NOT NULL,
    env                     TEXT NOT NULL,
    customer_id             TEXT NOT NULL REFERENCES customers (id),
    roles                   TEXT NOT NULL,
    ownership_percentage    INTEGER NOT NULL CHECK (ownership_percentage BETWEEN 0 AND 100),
    personal_info           TEXT NOT NULL,
    kyc_status              TEXT NOT NULL,
    review_verification_id  TEXT,
    deleted_at              BIGINT,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);

CREATE INDEX beneficial_owners_by_tenant ON beneficial_owners (platform_id, env, id);

CREATE INDEX beneficial_owners_by_customer ON beneficial_owners (platform_id, env, customer_id, id);

-- Verification documents: metadata only (type, holder, dates). The holder is
-- the customer itself or one of its beneficial owners; customer_id is always
-- the customer, so a customer's whole packet is one indexed read.
CREATE TABLE customer_documents (
    id             TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL,
    env            TEXT NOT NULL,
    customer_id    TEXT NOT NULL REFERENCES customers (id),
    holder_id      TEXT NOT NULL,
    document_type  TEXT NOT NULL,
    country        TEXT NOT NULL DEFAULT '',
    side           TEXT NOT NULL DEFAULT '',
    issued_on      TEXT,
    file_name      TEXT NOT NULL DEFAULT '',
    deleted_at     BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE INDEX customer_documents_by_customer ON customer_documents (platform_id, env, customer_id, id);

CREATE INDEX customer_documents_by_holder ON customer_documents (platform_id, env, holder_id, id);

-- Every POST /verifications that reached a decision, with the errors found.
CREATE TABLE verifications (
    id                   TEXT PRIMARY KEY,
    platform_id          TEXT NOT NULL,
    env                  TEXT NOT NULL,
    customer_id          TEXT NOT NULL REFERENCES customers (id),
    verification_status  TEXT NOT NULL,
    errors               TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);

CREATE INDEX verifications_by_tenant ON verifications (platform_id, env, id);

CREATE INDEX verifications_by_customer ON verifications (platform_id, env, customer_id, id);
