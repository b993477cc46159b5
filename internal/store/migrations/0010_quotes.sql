-- Quotes (issue 5): a quote prices a transfer and creates the OUTGOING
-- transaction that carries it (Part A "Quote and outgoing transaction").
-- Package quotes owns the rules. document is the quote as package quotes
-- keeps it (JSON: the API object plus what execution needs); the columns
-- beside it are what the service filters and locks on. Times are BIGINT
-- microseconds since the Unix epoch (UTC).
--
-- status mirrors the quote's transaction where Part A says so (PENDING,
-- PROCESSING, COMPLETED, FAILED, EXPIRED): transactions.Transition updates it
-- in the transaction that moves the transaction.
-- usd_equivalent is the sending amount in US cents at quote time, summed
-- over executed_at for the daily volume limit.

CREATE TABLE quotes (
    id              TEXT PRIMARY KEY,
    platform_id     TEXT NOT NULL REFERENCES platforms (id),
    env             TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    status          TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    customer_id     TEXT NOT NULL DEFAULT '',
    document        TEXT NOT NULL,
    usd_equivalent  BIGINT NOT NULL DEFAULT 0,
    expires_at      BIGINT NOT NULL,
    executed_at     BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

CREATE INDEX quotes_by_tenant ON quotes (platform_id, env, id);

CREATE INDEX quotes_by_transaction ON quotes (platform_id, env, transaction_id);

CREATE INDEX quotes_pending_expiry ON quotes (expires_at) WHERE status = 'PENDING';

CREATE INDEX quotes_executed ON quotes (platform_id, env, executed_at) WHERE executed_at IS NOT NULL;

-- Outgoing-transaction fields (Part A "Transaction"). JSON columns hold the
-- API objects as served ('' when absent); exchange_rate is the decimal as
-- text ('' when not known). Rail details live inside source/destination.
ALTER TABLE transactions ADD COLUMN payment_rail TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN platform_fees BIGINT NOT NULL DEFAULT 0;
ALTER TABLE transactions ADD COLUMN exchange_rate TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN rate_details TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN refund TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN payment_instructions TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN counterparty_information TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN hold_id TEXT NOT NULL DEFAULT '';

CREATE INDEX transactions_by_quote ON transactions (platform_id, env, quote_id) WHERE quote_id <> '';
