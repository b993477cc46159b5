-- Strong customer authentication on payouts (issue 19).

-- Quotes waiting on SCA authorization fail with SCA_NOT_COMPLETED when their
-- expiresAt passes; the expiry sweep finds them by this index (0010's
-- quotes_pending_expiry covers PENDING only).
CREATE INDEX quotes_authorization_expiry ON quotes (expires_at) WHERE status = 'PENDING_AUTHORIZATION';

-- The SCA exemption a payout went under without a challenge (LOW_VALUE,
-- TRUSTED_BENEFICIARY), recorded on its transaction; '' for none.
ALTER TABLE transactions ADD COLUMN sca_exemption TEXT NOT NULL DEFAULT '';
