-- The week planner (docs/labor-planning.md): when each employee of a location can work, and the
-- schedule proposals managers ask for, solved from a leased queue.
-- Locks are waited for briefly, so a migration never queues every request behind it; one that
-- times out is rolled back and tried again after a backoff (crates/postgres/src/migrations.rs).
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
CREATE TABLE planning_availability (
    location_id           UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    employee_key          TEXT NOT NULL,
    -- 0 for Saturday through 6 for Friday, as the week.
    unavailable_weekdays  SMALLINT[] NOT NULL DEFAULT '{}',
    unavailable_dates     DATE[] NOT NULL DEFAULT '{}',
    preferred_blocks      TEXT[] NOT NULL DEFAULT '{}',
    max_weekly_minutes    INTEGER CHECK (max_weekly_minutes BETWEEN 0 AND 10080),
    updated_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (location_id, employee_key)
);

CREATE TABLE schedule_proposals (
    id                    UUID PRIMARY KEY,
    team_id               TEXT NOT NULL,
    location_id           UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    week_of               DATE NOT NULL,
    time_limit_seconds    INTEGER NOT NULL CHECK (time_limit_seconds BETWEEN 1 AND 120),
    requested_by          TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('solving', 'ready', 'failed')),
    reason                TEXT,
    -- The solver that holds it, until when: a solve whose instance died is claimed again after it.
    lease_token           UUID,
    leased_until          TIMESTAMPTZ,
    attempts              INTEGER NOT NULL DEFAULT 0,
    created_at            TIMESTAMPTZ NOT NULL,
    completed_at          TIMESTAMPTZ,
    projected_sales       NUMERIC(14, 2),
    hours                 NUMERIC(10, 2),
    labor_cost            NUMERIC(14, 2),
    labor_pct             NUMERIC(10, 2),
    splh                  NUMERIC(12, 2),
    splh_target           NUMERIC(12, 2),
    labor_pct_target      NUMERIC(10, 2),
    solver_status         TEXT,
    objective             BIGINT,
    bound                 BIGINT,
    gap                   DOUBLE PRECISION,
    solve_seconds         DOUBLE PRECISION,
    -- [{"rule": "min_rest", "employees": ["7"]}, ...]
    binding_rules         JSONB
);
CREATE INDEX schedule_proposals_team_created_idx ON schedule_proposals (team_id, created_at DESC, id DESC);
CREATE INDEX schedule_proposals_queue_idx ON schedule_proposals (created_at) WHERE status = 'solving';

CREATE TABLE schedule_proposal_shifts (
    proposal_id           UUID NOT NULL REFERENCES schedule_proposals (id) ON DELETE CASCADE,
    position              INTEGER NOT NULL,
    employee_key          TEXT NOT NULL,
    employee_name         TEXT NOT NULL,
    role                  TEXT NOT NULL,
    department            TEXT NOT NULL CHECK (department IN ('FOH', 'BOH', 'Other')),
    business_date         DATE NOT NULL,
    block                 TEXT NOT NULL CHECK (block IN ('Lunch', 'Dinner', 'LateNight')),
    start_at              TIMESTAMPTZ NOT NULL,
    end_at                TIMESTAMPTZ NOT NULL CHECK (end_at > start_at),
    hours                 NUMERIC(6, 2) NOT NULL,
    cost                  NUMERIC(12, 2) NOT NULL,
    PRIMARY KEY (proposal_id, position)
);

CREATE TABLE schedule_proposal_coverage (
    proposal_id           UUID NOT NULL REFERENCES schedule_proposals (id) ON DELETE CASCADE,
    position              INTEGER NOT NULL,
    business_date         DATE NOT NULL,
    block                 TEXT NOT NULL CHECK (block IN ('Lunch', 'Dinner', 'LateNight')),
    department            TEXT NOT NULL CHECK (department IN ('FOH', 'BOH', 'Other')),
    hours_needed          NUMERIC(10, 2) NOT NULL,
    hours_planned         NUMERIC(10, 2) NOT NULL,
    PRIMARY KEY (proposal_id, position)
);
