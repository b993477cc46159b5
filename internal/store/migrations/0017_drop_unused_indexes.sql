-- Three indexes that no request reads, each still an index write on every
-- transfer (four of a transfer's index entries, about 5%; docs/benchmarks.md,
-- "Fifth session"):
--   transactions_by_quote: nothing looks a transaction up by its quote (a
--     quote carries its transaction's id; quotes_by_transaction serves the
--     other direction), and both sides of an internal transfer carry one;
--   ledger_transfers_by_reference: nothing looks a ledger transfer up by its
--     reference;
--   quotes_by_tenant: there is no quote list, only GET /quotes/{quoteId}
--     (the primary key); a tests-only count of a tenant's quotes scans.

DROP INDEX IF EXISTS transactions_by_quote;
DROP INDEX IF EXISTS ledger_transfers_by_reference;
DROP INDEX IF EXISTS quotes_by_tenant;
