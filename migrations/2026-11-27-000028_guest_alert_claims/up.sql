-- An alert's claim no longer runs out: a worker paused or cut off while it sends may still send,
-- so nobody else may. A claim is given back only when its push went nowhere; one whose worker died
-- mid-send stays claimed and unnotified, for an operator to see (at most once, never twice).
ALTER TABLE guest_alerts RENAME COLUMN sending_until TO claimed_at;
