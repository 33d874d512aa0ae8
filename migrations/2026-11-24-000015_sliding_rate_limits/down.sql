DROP TABLE assistant_usage;
DROP FUNCTION rate_limit_hit(TEXT, INTEGER, INTERVAL, TIMESTAMPTZ);
DROP TABLE rate_limit_hits;
CREATE TABLE rate_limit_windows (
    key          TEXT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    hits         INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);
