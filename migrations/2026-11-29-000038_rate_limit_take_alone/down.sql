-- rate_limit_take as migration 000030 wrote it, calling rate_limit_hit.
CREATE OR REPLACE FUNCTION rate_limit_take(p_key TEXT, p_limit INTEGER, p_window INTERVAL, p_now TIMESTAMPTZ,
                                OUT wait INTEGER, OUT remaining INTEGER, OUT reset INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_hits TIMESTAMPTZ[];
BEGIN
    wait := rate_limit_hit(p_key, p_limit, p_window, p_now);
    SELECT ARRAY(SELECT at FROM unnest(hits) AS at WHERE at > p_now - p_window ORDER BY at) INTO v_hits
    FROM rate_limits WHERE key = p_key;
    remaining := GREATEST(0, p_limit - coalesce(cardinality(v_hits), 0));
    reset := CASE WHEN coalesce(cardinality(v_hits), 0) = 0 THEN 0
                  ELSE GREATEST(1, ceil(extract(epoch FROM (v_hits[1] + p_window - p_now)))::INTEGER) END;
END $$;
