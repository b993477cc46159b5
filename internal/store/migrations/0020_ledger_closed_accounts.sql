-- A closed ledger account receives no more credits (issue 25): deleting a
-- customer closes the ledger accounts behind its internal accounts in the
-- delete's transaction, after checking, with the balance rows locked, that
-- they hold nothing. The flag lives on the balance row because that is the
-- row every transfer locks (FOR UPDATE on PostgreSQL) before it checks
-- anything: a credit that waited behind the delete sees the account closed,
-- and a delete that waited behind a credit sees the money. Hot accounts have
-- no balance row and are never closed.

ALTER TABLE ledger_balances ADD COLUMN closed BOOLEAN NOT NULL DEFAULT FALSE;
