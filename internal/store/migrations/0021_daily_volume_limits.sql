-- Each tenant's daily volume limit (R-ERR-21), in US cents of executed
-- sending amounts per UTC day, set by the operator (paymentsd limits set).
-- A tenant without a row has the service's default (--daily-volume-limit).
CREATE TABLE daily_volume_limits (
    platform_id  TEXT NOT NULL,
    env          TEXT NOT NULL,
    usd          BIGINT NOT NULL CHECK (usd > 0),
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (platform_id, env)
);
