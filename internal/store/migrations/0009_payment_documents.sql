-- Payment documents: files that support a payout (POST /payment-documents),
-- valid for 24 hours after upload and attachable to one quote only.
-- Times are BIGINT microseconds since the Unix epoch (UTC).
--
-- status:
--   PENDING    the row exists, its file is being written to the blob store;
--              never visible through the API.
--   UPLOADED   usable until expires_at.
--   ATTACHED   attached to quote_id; its file is to be deleted.
--   DISCARDED  an upload that did not finish (or was abandoned by a crashed
--              node); the sweeper deletes its file, then the row.
--
-- blob_key names the file in the blob store and is '' once the file is
-- deleted. The row itself is the durable "file to delete" marker: a file is
-- removed only after a committed row says it may be (ATTACHED, DISCARDED, or
-- UPLOADED long past expires_at), so a rolled-back attachment never loses a
-- file that is still needed.
CREATE TABLE payment_documents (
    id             TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL,
    env            TEXT NOT NULL,
    customer_id    TEXT REFERENCES customers (id),
    document_type  TEXT NOT NULL,
    file_name      TEXT NOT NULL,
    content_type   TEXT NOT NULL,
    size_bytes     BIGINT NOT NULL,
    sha256         TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('PENDING', 'UPLOADED', 'ATTACHED', 'DISCARDED')),
    blob_key       TEXT NOT NULL DEFAULT '',
    quote_id       TEXT,
    attached_at    BIGINT,
    expires_at     BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- What the sweeper scans: rows that still hold a file.
CREATE INDEX payment_documents_with_file ON payment_documents (status, expires_at) WHERE blob_key <> '';

-- The documents of a quote.
CREATE INDEX payment_documents_by_quote ON payment_documents (platform_id, env, quote_id) WHERE quote_id IS NOT NULL;
