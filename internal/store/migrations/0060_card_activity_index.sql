-- A statement asks whether its account had card activity before the
-- window's end (HadCardActivity: a non-declined CARD transaction), which
-- decides whether card settlement can still change it. Through
-- transactions_by_account that read every transaction of the account that
-- was not one: at 1M transactions, about 56,000 for the busiest account and
-- 90-110 ms per statement page on both engines. Only card transactions
-- enter this index, so the answer is one index probe.
CREATE INDEX IF NOT EXISTS transactions_card_activity ON transactions (platform_id, env, account_id, created_at)
    WHERE transaction_type = 'CARD' AND status <> 'DECLINED';
