-- Sandbox incoming deposits reported source.sourceType EXTERNAL_ACCOUNT, a
-- value neither the spec nor the reference names; an outside funding
-- source is REALTIME_FUNDING (issue 16, item 11). Stored transactions take
-- the spec's word too. Events already sent keep what they said.
UPDATE transactions
SET source = REPLACE(source, '"sourceType":"EXTERNAL_ACCOUNT"', '"sourceType":"REALTIME_FUNDING"')
WHERE source LIKE '{"sourceType":"EXTERNAL_ACCOUNT"%';
