-- UMA invitations (issue 20). code is the invitation's id: 128 random bits
-- in base32, unguessable, unique across the installation (an invitee at any
-- platform of the environment claims it by code). The inviting platform is
-- (platform_id, env); status PENDING, CLAIMED or CANCELLED is stored, EXPIRED
-- is read off expires_at (a PENDING invitation past it).
CREATE TABLE invitations (
    code                 TEXT PRIMARY KEY,
    platform_id          TEXT NOT NULL REFERENCES platforms (id),
    env                  TEXT NOT NULL CHECK (env IN ('sandbox', 'production')),
    inviter_uma          TEXT NOT NULL,
    inviter_customer_id  TEXT NOT NULL,
    invitee_uma          TEXT NOT NULL DEFAULT '',
    first_name           TEXT NOT NULL DEFAULT '',
    amount_to_send       BIGINT NOT NULL DEFAULT 0,
    amount_currency      TEXT NOT NULL DEFAULT '',
    url                  TEXT NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('PENDING', 'CLAIMED', 'CANCELLED')),
    expires_at           BIGINT NOT NULL,
    claimed_at           BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);

CREATE INDEX invitations_by_tenant ON invitations (platform_id, env, created_at);
