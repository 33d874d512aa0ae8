-- Time punches synced from 7shifts: what was worked, against what was scheduled (schedule_shifts).
-- `worked_hours` is NULL for a punch still open or not approved: stored, but it does not count.
CREATE TABLE time_punches (
    location_id           UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    provider_punch_id     TEXT NOT NULL,
    employee_key          TEXT NOT NULL,
    department            TEXT NOT NULL CHECK (department IN ('FOH', 'BOH', 'Other')),
    business_date         DATE NOT NULL,
    clocked_in            TIMESTAMPTZ NOT NULL,
    clocked_out           TIMESTAMPTZ CHECK (clocked_out IS NULL OR clocked_out >= clocked_in),
    approved              BOOLEAN NOT NULL,
    unpaid_break_minutes  INTEGER NOT NULL CHECK (unpaid_break_minutes >= 0),
    worked_hours          NUMERIC(8, 2) CHECK (worked_hours >= 0),
    hourly_wage           NUMERIC(10, 2) NOT NULL CHECK (hourly_wage >= 0),
    synced_at             TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (location_id, provider_punch_id)
);
CREATE INDEX time_punches_location_date_idx ON time_punches (location_id, business_date);

-- Where each location's punch sync stands: the next run asks for punches modified since then
-- (less an overlap).
CREATE TABLE punch_sync_state (
    location_id     UUID PRIMARY KEY REFERENCES locations (id) ON DELETE CASCADE,
    synced_through  TIMESTAMPTZ NOT NULL
);
