-- rate_limit_hit as migration 000022 wrote it.
CREATE FUNCTION rate_limit_hit(p_key TEXT, p_limit INTEGER, p_window INTERVAL, p_now TIMESTAMPTZ)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_hits TIMESTAMPTZ[];
BEGIN
    SELECT hits INTO v_hits FROM rate_limits WHERE key = p_key FOR UPDATE;
    IF NOT FOUND AND p_limit > 0 THEN
        INSERT INTO rate_limits (key, hits) VALUES (p_key, ARRAY[p_now]) ON CONFLICT (key) DO NOTHING;
        IF FOUND THEN
            RETURN 0;
        END IF;
        SELECT hits INTO v_hits FROM rate_limits WHERE key = p_key FOR UPDATE;
    END IF;
    v_hits := ARRAY(SELECT at FROM unnest(v_hits) AS at WHERE at > p_now - p_window ORDER BY at);
    IF cardinality(v_hits) >= p_limit THEN
        -- When enough of the oldest have left the window for one more call to fit.
        RETURN GREATEST(1, ceil(extract(epoch FROM (
            v_hits[cardinality(v_hits) - p_limit + 1] + p_window - p_now)))::INTEGER);
    END IF;
    UPDATE rate_limits SET hits = v_hits || p_now WHERE key = p_key;
    RETURN 0;
END $$;
