-- PostgreSQL only (migrate.go): the foreign keys every transfer's commit
-- checked, row by row, on its quote, its two transactions rows and its
-- ledger postings. Each check is a trigger that looks the parent up and
-- KEY SHARE-locks it, and the parents here are the hottest rows there are:
-- the tenant's one platforms row (locked by every batch of every node, so
-- concurrent batches share the lock as a multixact), the customer, the
-- ledger accounts of the transfer.
--
-- No parent here is ever deleted: platforms and ledger rows are never
-- deleted, customers only marked deleted (deleted_at). The code writes each
-- child with its parent in hand: a quote and a transactions row for the
-- tenant of the request and the customer it read in the same transaction, a
-- posting in the statement that writes its transfer, and for an account
-- whose balance row the same commit updates by a checked, versioned update
-- (ledger_balances keeps its key to ledger_accounts). The books audit
-- (ledger.Audit, paymentsbench's checks) reads every posting against its
-- transfer and its account.
--
-- SQLite keeps these keys: it checks them without row locks, in-process.
ALTER TABLE quotes DROP CONSTRAINT IF EXISTS quotes_platform_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT IF EXISTS transactions_platform_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT IF EXISTS transactions_customer_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT IF EXISTS transactions_ledger_transfer_id_fkey;
ALTER TABLE ledger_postings DROP CONSTRAINT IF EXISTS ledger_postings_transfer_id_fkey;
ALTER TABLE ledger_postings DROP CONSTRAINT IF EXISTS ledger_postings_account_id_fkey;
