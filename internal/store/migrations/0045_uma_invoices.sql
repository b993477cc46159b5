-- UMA payments settle over the sandbox Lightning simulator (package uma,
-- lnsim.go). uma_invoices are the invoices this institution issued as the
-- receiver of a pay request: the payment hash is sha256 of a preimage kept
-- sealed; settling the invoice (the payer's HTLC) credits account_id with
-- receiving_amount in one database transaction and reveals the preimage.
-- status: PENDING or PAID.
CREATE TABLE uma_invoices (
    payment_hash      TEXT PRIMARY KEY,
    platform_id       TEXT NOT NULL REFERENCES platforms (id),
    env               TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    customer_id       TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    currency          TEXT NOT NULL,
    receiving_amount  BIGINT NOT NULL,
    amount_msat       BIGINT NOT NULL,
    sealed_preimage   TEXT NOT NULL,
    sender_address    TEXT NOT NULL,
    receiver_address  TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('PENDING', 'PAID')),
    transaction_id    TEXT NOT NULL DEFAULT '',
    expires_at        BIGINT NOT NULL,
    created_at        BIGINT NOT NULL,
    paid_at           BIGINT
);

-- uma_payments are this institution's payments to UMA addresses, executed
-- and awaiting settlement: the ledger HOLD placed at execution (source −S,
-- CLEARING_UMA +R pending), the counterparty's invoice, and the state of its
-- payment over the simulator. A runner pays due PENDING rows; success posts
-- the hold and completes the transaction with the payment hash as
-- transactionHash, a definitive failure voids it (LNURLP_FAILED). Paying an
-- invoice twice is harmless: the receiving node settles it once.
-- status: PENDING, SETTLED or FAILED.
CREATE TABLE uma_payments (
    transaction_id    TEXT PRIMARY KEY,
    platform_id       TEXT NOT NULL REFERENCES platforms (id),
    env               TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    hold_id           TEXT NOT NULL,
    invoice           TEXT NOT NULL,
    receiver          TEXT NOT NULL,
    currency          TEXT NOT NULL,
    receiving_amount  BIGINT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'FAILED')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    due_at            BIGINT NOT NULL,
    transaction_hash  TEXT NOT NULL DEFAULT '',
    failure           TEXT NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);

CREATE INDEX uma_payments_due ON uma_payments (status, due_at);
