DROP FUNCTION rate_limit_hit(TEXT, INTEGER, INTERVAL, TIMESTAMPTZ);
DROP TABLE rate_limits;

CREATE TABLE rate_limit_hits (
    key TEXT NOT NULL,
    at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX rate_limit_hits_key_at_idx ON rate_limit_hits (key, at);

CREATE FUNCTION rate_limit_hit(p_key TEXT, p_limit INTEGER, p_window INTERVAL, p_now TIMESTAMPTZ)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    v_count  INTEGER;
    v_oldest TIMESTAMPTZ;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('rate_limit:' || p_key, 0));
    DELETE FROM rate_limit_hits WHERE key = p_key AND at <= p_now - p_window;
    SELECT count(*), min(at) INTO v_count, v_oldest FROM rate_limit_hits WHERE key = p_key;
    IF v_count >= p_limit THEN
        RETURN GREATEST(1, ceil(extract(epoch FROM (v_oldest + p_window - p_now)))::INTEGER);
    END IF;
    INSERT INTO rate_limit_hits (key, at) VALUES (p_key, p_now);
    RETURN 0;
END $$;
