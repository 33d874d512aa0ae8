-- Rate limits over a sliding window: one row per admitted call, so a key gets at most `limit` calls
-- in any window (the fixed one-minute windows let twice the limit through across their edge).
DROP TABLE rate_limit_windows;

CREATE TABLE rate_limit_hits (
    key TEXT NOT NULL,
    at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX rate_limit_hits_key_at_idx ON rate_limit_hits (key, at);

-- Admits one call of `p_key` at `p_now` when fewer than `p_limit` were admitted in the window
-- before it, and returns 0; otherwise records nothing and returns the whole seconds until one
-- would pass. Calls of one key are serialized by a transaction-scoped advisory lock, so instances
-- racing on a key cannot both take its last place.
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

-- Tokens the assistant used per team and UTC day, for the daily budget.
CREATE TABLE assistant_usage (
    team_id TEXT NOT NULL,
    day     DATE NOT NULL,
    tokens  BIGINT NOT NULL,
    PRIMARY KEY (team_id, day)
);
