-- pendingReason explains why a transaction is held (R-TXN-30). The only hold
-- the service makes today is an incoming payment waiting for the platform's
-- approval (sandbox: amount ending in 907), reported as COMPLIANCE_REVIEW;
-- the reason is cleared when the transaction leaves PENDING.
ALTER TABLE transactions ADD COLUMN pending_reason TEXT NOT NULL DEFAULT '';

UPDATE transactions SET pending_reason = 'COMPLIANCE_REVIEW'
WHERE transaction_type = 'INCOMING' AND status = 'PENDING';
