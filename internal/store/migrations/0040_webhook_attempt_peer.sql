-- Whether the address a delivery attempt reached was a public one (1) or
-- not (0: loopback, private, link-local...). GET /events/{id} shows the
-- receiver's response excerpt only when the address it came from is
-- allowed now; attempts recorded before this column are treated as not
-- public, so a body read from an internal address while private addresses
-- were allowed is not shown once they are not.
ALTER TABLE webhook_attempts ADD COLUMN peer_public INTEGER NOT NULL DEFAULT 0;
