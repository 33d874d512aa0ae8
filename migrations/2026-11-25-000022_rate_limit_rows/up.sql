-- Rate limits keep one row per key: the times of its calls admitted within the last window, at most
-- `limit` of them. A call locks the key's row, drops the times that left the window and appends its
-- own: one index probe and an update in place. A row per admitted call cost an advisory lock, a
-- range delete, a count and an insert with its index entry, and kept the key's last `limit` rows
-- for good once it went quiet.
DROP FUNCTION rate_limit_hit(TEXT, INTEGER, INTERVAL, TIMESTAMPTZ);
DROP TABLE rate_limit_hits;

-- Room on each page, so the updates stay on it (heap-only tuples: no new index entry).
CREATE TABLE rate_limits (
    key  TEXT PRIMARY KEY,
    hits TIMESTAMPTZ[] NOT NULL
) WITH (fillfactor = 70);

-- Admits one call of `p_key` at `p_now` when fewer than `p_limit` were admitted in the window
-- before it, and returns 0; otherwise records nothing and returns the whole seconds until one
-- would pass. The key's row lock serializes its calls, so instances racing on a key cannot both take
-- its last place; two first calls race on the insert, and the loser then waits on the row.
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
