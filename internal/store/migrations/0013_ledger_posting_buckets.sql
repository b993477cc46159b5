-- Sums of posted postings per account and time bucket, so that an account's
-- posted balance at an instant (a statement's opening and closing balance)
-- reads one row per day of history rather than one per posting: the day
-- buckets before the instant's day, the hour buckets of that day before its
-- hour, then the postings of that hour.
--
-- Only accounts with a ledger_balances row have buckets: ledger.Apply adds
-- to them in the transaction that writes the postings, while it holds that
-- row's lock, so buckets add no contention. Hot SYSTEM accounts have none.
--
-- Sums rather than a running balance: a transaction may commit after one
-- with a later created_at, and a sum per bucket is exact in any order.
--
-- span is 3600000000 (an hour) or 86400000000 (a day) microseconds;
-- bucket_start is created_at rounded down to a multiple of span (the modulo
-- form rounds down on both engines for any sign; plain division truncates).

CREATE TABLE ledger_posting_buckets (
    account_id    TEXT NOT NULL REFERENCES ledger_accounts (id),
    span          BIGINT NOT NULL CHECK (span IN (3600000000, 86400000000)),
    bucket_start  BIGINT NOT NULL,
    amount        BIGINT NOT NULL,
    PRIMARY KEY (account_id, span, bucket_start)
);

INSERT INTO ledger_posting_buckets (account_id, span, bucket_start, amount)
SELECT account_id, span, bucket_start, CAST(SUM(amount) AS BIGINT) FROM (
    SELECT p.account_id, s.span, p.created_at - ((p.created_at % s.span) + s.span) % s.span AS bucket_start, p.amount
    FROM ledger_postings p
    JOIN ledger_balances b ON b.account_id = p.account_id
    CROSS JOIN (SELECT 3600000000 AS span UNION ALL SELECT 86400000000) s
    WHERE NOT p.pending
) x
GROUP BY account_id, span, bucket_start;
