CREATE TABLE sales_facts (
    location_id  UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    date         DATE NOT NULL,
    block        TEXT NOT NULL CHECK (block IN ('Lunch', 'Dinner', 'LateNight')),
    food         NUMERIC(12, 2) NOT NULL CHECK (food >= 0),
    beverage     NUMERIC(12, 2) NOT NULL CHECK (beverage >= 0),
    other        NUMERIC(12, 2) NOT NULL CHECK (other >= 0),
    guests       INTEGER CHECK (guests >= 0),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (location_id, date, block)
);

-- Per-weekday goals (0 = Saturday): a location's own, or the team default (location_id NULL).
CREATE TABLE labor_goals (
    team_id           TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    location_id       UUID REFERENCES locations (id) ON DELETE CASCADE,
    day_of_week       SMALLINT NOT NULL CHECK (day_of_week BETWEEN 0 AND 6),
    sales_goal        NUMERIC(12, 2) NOT NULL CHECK (sales_goal >= 0),
    labor_pct_target  NUMERIC(5, 2) NOT NULL CHECK (labor_pct_target BETWEEN 0 AND 100),
    splh_target       NUMERIC(12, 2) NOT NULL CHECK (splh_target >= 0),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX labor_goals_team_default_key ON labor_goals (team_id, day_of_week) WHERE location_id IS NULL;
CREATE UNIQUE INDEX labor_goals_location_key ON labor_goals (location_id, day_of_week) WHERE location_id IS NOT NULL;

-- The imported schedule: written by the schedule sync, read by analytics and the legacy view.
CREATE TABLE schedule_shifts (
    id                    UUID PRIMARY KEY,
    location_id           UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    provider_shift_id     TEXT NOT NULL,
    business_date         DATE NOT NULL,
    employee_name         TEXT NOT NULL,
    employee_key          TEXT NOT NULL,
    role                  TEXT NOT NULL,
    department            TEXT NOT NULL CHECK (department IN ('FOH', 'BOH', 'Other')),
    daypart               TEXT NOT NULL CHECK (daypart IN ('Lunch', 'Dinner', 'LateNight')),
    start_at              TIMESTAMPTZ NOT NULL,
    end_at                TIMESTAMPTZ NOT NULL CHECK (end_at > start_at),
    unpaid_break_minutes  INTEGER NOT NULL DEFAULT 0 CHECK (unpaid_break_minutes >= 0),
    hours_worked          NUMERIC(8, 2) NOT NULL CHECK (hours_worked >= 0),
    hourly_wage           NUMERIC(10, 2) NOT NULL CHECK (hourly_wage >= 0),
    is_draft              BOOLEAN NOT NULL,
    synced_at             TIMESTAMPTZ NOT NULL,
    CONSTRAINT schedule_shifts_provider_key UNIQUE (location_id, provider_shift_id)
);
CREATE INDEX schedule_shifts_location_date_idx ON schedule_shifts (location_id, business_date);
CREATE INDEX schedule_shifts_location_start_idx ON schedule_shifts (location_id, start_at, id);
