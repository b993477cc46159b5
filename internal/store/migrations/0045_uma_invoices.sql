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
