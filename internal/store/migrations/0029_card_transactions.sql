-- Card transactions (issue 18). A card transaction is a transactions row of
-- type CARD (lists, filters, counters and statements treat it like any
-- other); card_details holds its card fields as JSON (package transactions
-- renders them: merchant, authorized, held, settled and refunded amounts,
-- the decline reason, the original of a return).
ALTER TABLE transactions ADD COLUMN card_details TEXT NOT NULL DEFAULT '';

CREATE INDEX transactions_by_card ON transactions (platform_id, env, card_id, id) WHERE card_id <> '';

-- Open authorizations: one row per card transaction whose hold is still
-- pending, with when it expires. The card runner voids due ones; a clearing,
-- reversal or close deletes the row with the hold's resolution.
CREATE TABLE card_open_authorizations (
    transaction_id TEXT PRIMARY KEY REFERENCES transactions (id),
    platform_id    TEXT NOT NULL,
    env            TEXT NOT NULL,
    card_id        TEXT NOT NULL REFERENCES cards (id),
    account_id     TEXT NOT NULL,
    expires_at     BIGINT NOT NULL,
    created_at     BIGINT NOT NULL
);

CREATE INDEX card_open_authorizations_due ON card_open_authorizations (expires_at);
CREATE INDEX card_open_authorizations_by_card ON card_open_authorizations (platform_id, env, card_id);
CREATE INDEX card_open_authorizations_by_account ON card_open_authorizations (platform_id, env, account_id, created_at);

-- Spend counted against a card's daily limits: each approved authorization
-- (counted = 1) and each increase of one (counted = 0), on the UTC day it was
-- approved. Reversals, expiries and refunds never remove rows: they do not
-- restore capacity.
CREATE TABLE card_spend (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL,
    env         TEXT NOT NULL,
    card_id     TEXT NOT NULL REFERENCES cards (id),
    day         TEXT NOT NULL,
    amount      BIGINT NOT NULL CHECK (amount >= 0),
    counted     INTEGER NOT NULL CHECK (counted IN (0, 1)),
    created_at  BIGINT NOT NULL
);

CREATE INDEX card_spend_by_day ON card_spend (platform_id, env, card_id, day);
