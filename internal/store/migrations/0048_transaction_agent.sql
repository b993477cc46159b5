-- The agent that initiated a transaction (R-TXN-38): set when an agent's
-- action executes the transaction's quote; '' when no agent did.
ALTER TABLE transactions ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
