-- rate_limit_take (migration 000030) with rate_limit_hit's admission written into it, so nothing
-- calls rate_limit_hit any more and migration 000039 can drop it once no instance of a release that
-- calls it is left. It answers as before: the seconds to wait (0 when admitted), the calls left in
-- the window after this one, and the seconds until the oldest counted call leaves it.
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
CREATE OR REPLACE FUNCTION rate_limit_take(p_key TEXT, p_limit INTEGER, p_window INTERVAL, p_now TIMESTAMPTZ,
                                           OUT wait INTEGER, OUT remaining INTEGER, OUT reset INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_hits TIMESTAMPTZ[];
    v_inserted BOOLEAN := false;
BEGIN
    wait := 0;
    -- The key's row lock serializes its calls; two first calls race on the insert, and the loser
    -- then waits on the row.
    SELECT hits INTO v_hits FROM rate_limits WHERE key = p_key FOR UPDATE;
    IF NOT FOUND AND p_limit > 0 THEN
        INSERT INTO rate_limits (key, hits) VALUES (p_key, ARRAY[p_now]) ON CONFLICT (key) DO NOTHING;
        v_inserted := FOUND;
        IF NOT v_inserted THEN
            SELECT hits INTO v_hits FROM rate_limits WHERE key = p_key FOR UPDATE;
        END IF;
    END IF;
    IF NOT v_inserted THEN
        v_hits := ARRAY(SELECT at FROM unnest(v_hits) AS at WHERE at > p_now - p_window ORDER BY at);
        IF cardinality(v_hits) >= p_limit THEN
            -- When enough of the oldest have left the window for one more call to fit.
            wait := GREATEST(1, ceil(extract(epoch FROM (
                v_hits[cardinality(v_hits) - p_limit + 1] + p_window - p_now)))::INTEGER);
        ELSE
            UPDATE rate_limits SET hits = v_hits || p_now WHERE key = p_key;
        END IF;
    END IF;
    SELECT ARRAY(SELECT at FROM unnest(hits) AS at WHERE at > p_now - p_window ORDER BY at) INTO v_hits
    FROM rate_limits WHERE key = p_key;
    remaining := GREATEST(0, p_limit - coalesce(cardinality(v_hits), 0));
    reset := CASE WHEN coalesce(cardinality(v_hits), 0) = 0 THEN 0
                  ELSE GREATEST(1, ceil(extract(epoch FROM (v_hits[1] + p_window - p_now)))::INTEGER) END;
END $$;
