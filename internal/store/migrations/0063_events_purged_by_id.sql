-- Retention (PurgeEvents) finds old events through the primary key: event
-- ids are UUIDv7, which sort by their creation millisecond, so the ids made
-- before the cutoff are a range of events_pkey (id.Floor), and created_at
-- is checked on the rows of that range. events_by_age cost every event an
-- index entry, four per transfer, for a purge that runs once a minute.
DROP INDEX IF EXISTS events_by_age;
