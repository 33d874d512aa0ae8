-- Fixed one-minute windows of calls per key, shared by every instance.
CREATE TABLE rate_limit_windows (
    key           TEXT NOT NULL,
    window_start  TIMESTAMPTZ NOT NULL,
    hits          INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);
