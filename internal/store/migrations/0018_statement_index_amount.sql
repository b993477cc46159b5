-- A statement's opening and closing balances come from the statement
-- buckets, whole days then whole hours, and then the account's postings of
-- the last, partial hour (store.LedgerPostedSumBefore). That remainder is as
-- many postings as the account had in that hour, and each was a row lookup
-- for its amount. With the amount in the statement index the remainder is
-- summed from the index alone. Measured on SQLite at 1M transactions, with a
-- busy account's 273 postings in the partial hour: the last-24-hours page
-- p50 3.1-3.5 ms -> 1.15 ms (docs/benchmarks.md, "Fifth session"). The
-- trailing column changes neither the order nor the uniqueness of entries.

DROP INDEX IF EXISTS ledger_postings_statement;
CREATE INDEX ledger_postings_statement ON ledger_postings (account_id, created_at, id, amount) WHERE NOT pending;
