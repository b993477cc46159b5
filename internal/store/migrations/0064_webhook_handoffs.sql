-- Hand-overs without delivery rows (docs/architecture-webhooks.md, "The
-- hand-over journal"). A delivery handed over at its event's commit to the
-- committing node's runner no longer gets a webhook_deliveries row then: the
-- row is written once, with the first attempt's outcome. What would find the
-- event again if the node died before that is one row here per committing
-- statement, naming the events it handed over, leased like a claim. The
-- runner deletes it once every outcome is written; claims turn an expired
-- one into due deliveries for the events that still have no row.
CREATE TABLE webhook_handoffs (
    id           TEXT PRIMARY KEY, -- the first event's id
    lease_token  TEXT NOT NULL,
    lease_until  BIGINT NOT NULL,
    event_ids    TEXT NOT NULL     -- comma-separated
);

CREATE INDEX webhook_handoffs_by_lease ON webhook_handoffs (lease_until);
