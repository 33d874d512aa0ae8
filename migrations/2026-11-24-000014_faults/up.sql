-- A run whose instance died before it ended is marked abandoned by the next run of its job.
ALTER TABLE job_runs DROP CONSTRAINT job_runs_status_check;
ALTER TABLE job_runs ADD CONSTRAINT job_runs_status_check
    CHECK (status IN ('running', 'ok', 'partial', 'failed', 'skipped', 'disabled', 'abandoned'));

-- The outbox of announcement pushes: one row per recipient, written in the transaction that
-- publishes the announcement, delivered by the publish job with retries; a delivered row is never
-- sent again.
CREATE TABLE announcement_pushes (
    announcement_id UUID NOT NULL REFERENCES announcements (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    -- Not claimable before this: a lease while a delivery runs, a backoff after a failed one.
    available_at    TIMESTAMPTZ NOT NULL,
    last_error      TEXT,
    devices         INTEGER,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (announcement_id, user_id)
);
CREATE INDEX announcement_pushes_pending_idx ON announcement_pushes (available_at) WHERE state = 'pending';
