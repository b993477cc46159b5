-- KYC document files, hosted KYC links and bulk customer imports.
-- Times are BIGINT microseconds since the Unix epoch (UTC).

-- The file behind a verification document lives in the blob store under
-- blob_key (a generated key, never the user's file name); the row keeps its
-- detected content type, size and SHA-256. Rows recorded by the sandbox
-- without a file keep the defaults.
ALTER TABLE customer_documents ADD COLUMN blob_key TEXT NOT NULL DEFAULT '';

ALTER TABLE customer_documents ADD COLUMN content_type TEXT NOT NULL DEFAULT '';

ALTER TABLE customer_documents ADD COLUMN size_bytes BIGINT NOT NULL DEFAULT 0;

ALTER TABLE customer_documents ADD COLUMN sha256 TEXT NOT NULL DEFAULT '';

ALTER TABLE customer_documents ADD COLUMN document_number TEXT NOT NULL DEFAULT '';

ALTER TABLE customer_documents ADD COLUMN issuing_authority TEXT NOT NULL DEFAULT '';

-- One live document per holder, type and side: a second one is 409
-- DOCUMENT_ALREADY_EXISTS and is replaced with PUT. Older live duplicates
-- (possible before this migration) are retired first, keeping the newest.
UPDATE customer_documents SET deleted_at = updated_at
WHERE deleted_at IS NULL AND EXISTS (
    SELECT 1 FROM customer_documents newer
    WHERE newer.platform_id = customer_documents.platform_id AND newer.env = customer_documents.env
      AND newer.holder_id = customer_documents.holder_id AND newer.document_type = customer_documents.document_type
      AND newer.side = customer_documents.side AND newer.deleted_at IS NULL AND newer.id > customer_documents.id);

CREATE UNIQUE INDEX customer_documents_one_per_kind ON customer_documents (platform_id, env, holder_id, document_type, side) WHERE deleted_at IS NULL;

-- Blobs no row refers to any more (a replaced or deleted document's file),
-- written in the transaction that drops the reference and removed from the
-- blob store after it commits, or later by the sweeper after a crash.
CREATE TABLE blob_trash (
    blob_key    TEXT PRIMARY KEY,
    created_at  BIGINT NOT NULL
);

-- Hosted KYC links. Only a SHA-256 of the link's token is kept. A link is
-- single-use: used_at is set, atomically, by the submission that consumes it.
CREATE TABLE kyc_links (
    id               TEXT PRIMARY KEY,
    platform_id      TEXT NOT NULL,
    env              TEXT NOT NULL,
    customer_id      TEXT NOT NULL REFERENCES customers (id),
    token_hash       TEXT NOT NULL,
    redirect_uri     TEXT NOT NULL DEFAULT '',
    expires_at       BIGINT NOT NULL,
    used_at          BIGINT,
    verification_id  TEXT,
    created_at       BIGINT NOT NULL
);

CREATE UNIQUE INDEX kyc_links_by_token ON kyc_links (token_hash);

CREATE INDEX kyc_links_by_customer ON kyc_links (platform_id, env, customer_id, id);

-- Bulk customer imports. The uploaded CSV is in the blob store; a worker
-- leases a job (lease_owner, lease_until), streams the file and commits its
-- progress in batches: next_row data rows are done, with their counters and
-- errors. A job whose worker died resumes from next_row once the lease ends.
CREATE TABLE bulk_import_jobs (
    id                TEXT PRIMARY KEY,
    platform_id       TEXT NOT NULL,
    env               TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
    blob_key          TEXT NOT NULL,
    file_name         TEXT NOT NULL DEFAULT '',
    size_bytes        BIGINT NOT NULL DEFAULT 0,
    -- total_rows is -1 until the worker has counted the file's data rows.
    total_rows        INTEGER NOT NULL DEFAULT -1,
    next_row          INTEGER NOT NULL DEFAULT 0,
    succeeded         INTEGER NOT NULL DEFAULT 0,
    already_imported  INTEGER NOT NULL DEFAULT 0,
    failed            INTEGER NOT NULL DEFAULT 0,
    error_count       INTEGER NOT NULL DEFAULT 0,
    attempts          INTEGER NOT NULL DEFAULT 0,
    failure_reason    TEXT NOT NULL DEFAULT '',
    lease_owner       TEXT,
    lease_until       BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    started_at        BIGINT,
    completed_at      BIGINT
);

CREATE INDEX bulk_import_jobs_open ON bulk_import_jobs (created_at, id) WHERE status IN ('PENDING', 'PROCESSING');

CREATE INDEX bulk_import_jobs_by_tenant ON bulk_import_jobs (platform_id, env, id);

-- Per-row errors of a job, in the order found (seq).
CREATE TABLE bulk_import_errors (
    job_id           TEXT NOT NULL REFERENCES bulk_import_jobs (id),
    seq              INTEGER NOT NULL,
    row_number       INTEGER NOT NULL,
    correlation_id   TEXT NOT NULL,
    field            TEXT NOT NULL,
    code             TEXT NOT NULL,
    constraint_name  TEXT NOT NULL,
    message          TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
);
