-- Post-deploy (the folder's `_post_deploy`: `opsd migrate --post-deploy`, once no instance of an
-- older release is left): rate_limit_hit, replaced by rate_limit_take in migration 000030 and
-- called by nothing since migration 000038.
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
-- Post-deploy, when no running release calls it:
-- squawk-ignore ban-drop-function
DROP FUNCTION rate_limit_hit(TEXT, INTEGER, INTERVAL, TIMESTAMPTZ);
