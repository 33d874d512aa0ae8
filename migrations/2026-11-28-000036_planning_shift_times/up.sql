-- A location's shift times as its manager sets them, per department and block, over the ones the
-- week planner reads from its history (docs/labor-planning.md).
-- Locks are waited for briefly, so a migration never queues every request behind it; one that
-- times out is rolled back and tried again after a backoff (crates/postgres/src/migrations.rs).
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
CREATE TABLE planning_shift_times (
    location_id UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    department TEXT NOT NULL CHECK (department IN ('FOH', 'BOH', 'Other')),
    block TEXT NOT NULL CHECK (block IN ('Lunch', 'Dinner', 'LateNight')),
    start_minute INTEGER NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
    minutes INTEGER NOT NULL CHECK (minutes BETWEEN 60 AND 960),
    PRIMARY KEY (location_id, department, block)
);
