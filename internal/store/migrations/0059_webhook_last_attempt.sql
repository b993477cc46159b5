-- A delivery holds its last attempt inline (issue 23: fewer rows per
-- transfer). Recording an attempt is the UPDATE of the delivery that moves
-- its state on; only when the row already holds an earlier attempt is that
-- one moved into webhook_attempts, in the same statement (PostgreSQL) or
-- transaction (SQLite). So a delivery that succeeds first time writes no
-- webhook_attempts row, and one tried n times writes n-1. The attempts of an
-- event are the rows of webhook_attempts and this one (store.ListAttempts
-- merges them by id); rows recorded before this migration live only in
-- webhook_attempts, with these columns NULL. An attempt whose lease was lost
-- goes to webhook_attempts directly. Column meanings are those of
-- webhook_attempts; last_attempt_id is NULL when the delivery holds none.
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_id TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempted_at BIGINT;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_url TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_status_code INTEGER;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_latency_ms BIGINT;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_response_excerpt TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_error TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_peer_public INTEGER;
