-- Card data (issue 18, item 4): what the service keeps to verify a card's
-- PIN and to make its hosted pages single-use. The PIN itself is never
-- stored: card_pins holds its Visa PIN verification value (PVV, four digits
-- computed under a PIN verification key that is not in the database), the
-- key index it was computed with, and the wrong-entry counter. status is
-- OK or BLOCKED (a card without a row has no PIN). The PAN and CVV are not
-- here either (the CVV is computed when revealed, never stored).
CREATE TABLE card_pins (
    card_id         TEXT PRIMARY KEY,
    platform_id     TEXT NOT NULL,
    env             TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    pvv             TEXT NOT NULL,
    pvki            INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('OK', 'BLOCKED')),
    wrong_tries     INTEGER NOT NULL CHECK (wrong_tries >= 0),
    last_unblock_at BIGINT NOT NULL DEFAULT 0,
    set_at          BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

-- Every successful PIN unblock, kept for the rolling seven-day allowance
-- (one unblock per card per seven days) and for audit.
CREATE TABLE card_pin_unblocks (
    card_id     TEXT NOT NULL,
    platform_id TEXT NOT NULL,
    env         TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    unblocked_at BIGINT NOT NULL,
    PRIMARY KEY (card_id, unblocked_at)
);

-- Burned ids (jti) of the signed single-use URLs and submit tokens of the
-- hosted reveal and PIN pages: a second use of the same id finds its row and
-- is refused. Rows past expires_at are deleted (the signature has expired
-- by then, so the row is no longer needed to refuse it).
CREATE TABLE card_url_uses (
    jti         TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    card_id     TEXT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT NOT NULL
);

CREATE INDEX card_url_uses_by_expiry ON card_url_uses (expires_at);
