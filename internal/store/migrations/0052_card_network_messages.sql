-- The sandbox card network's messages (issue 18): each simulate/* call is
-- recorded here, PENDING, in the transaction that answers it (with its
-- idempotency record); the card runner applies them in arrival order per
-- card (seq), each under a lease so two nodes never apply one twice, and
-- marks each APPLIED or FAILED (with the refusal's code and message). A
-- message that creates a card transaction (authorizations, returns) carries
-- the transaction's id from the start; the transactions row appears when it
-- is applied.
CREATE TABLE card_network_messages (
    id              TEXT PRIMARY KEY,
    platform_id     TEXT NOT NULL,
    env             TEXT NOT NULL,
    card_id         TEXT NOT NULL REFERENCES cards (id),
    seq             BIGINT NOT NULL,
    kind            TEXT NOT NULL,
    body            TEXT NOT NULL,
    transaction_id  TEXT NOT NULL,
    creates         INTEGER NOT NULL CHECK (creates IN (0, 1)),
    token           TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('PENDING', 'APPLIED', 'FAILED')),
    failure_code    TEXT NOT NULL DEFAULT '',
    failure_message TEXT NOT NULL DEFAULT '',
    attempts        INTEGER NOT NULL DEFAULT 0,
    lease_until     BIGINT,
    created_at      BIGINT NOT NULL,
    applied_at      BIGINT,
    UNIQUE (card_id, seq)
);

CREATE INDEX card_network_messages_pending ON card_network_messages (card_id, seq) WHERE status = 'PENDING';
CREATE INDEX card_network_messages_by_transaction ON card_network_messages (platform_id, env, transaction_id);
