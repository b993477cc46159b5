-- Quotes waiting on SCA authorization (issue 19) fail with SCA_NOT_COMPLETED
-- when their expiresAt passes; the expiry sweep finds them by this index
-- (0010's quotes_pending_expiry covers PENDING only).
CREATE INDEX quotes_authorization_expiry ON quotes (expires_at) WHERE status = 'PENDING_AUTHORIZATION';
