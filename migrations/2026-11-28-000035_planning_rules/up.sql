-- The rules each team plans its weeks under (docs/labor-planning.md); a team without a row plans
-- under the defaults.
-- Locks are waited for briefly, so a migration never queues every request behind it; one that
-- times out is rolled back and tried again after a backoff (crates/postgres/src/migrations.rs).
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
CREATE TABLE planning_rules (
    team_id TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    max_weekly_minutes INTEGER NOT NULL CHECK (max_weekly_minutes BETWEEN 60 AND 4800),
    min_rest_minutes INTEGER NOT NULL CHECK (min_rest_minutes BETWEEN 0 AND 1440),
    max_days_in_a_row INTEGER NOT NULL CHECK (max_days_in_a_row BETWEEN 1 AND 7),
    min_shift_minutes INTEGER NOT NULL CHECK (min_shift_minutes BETWEEN 60 AND 720),
    understaffed_sales_at_risk_pct INTEGER NOT NULL CHECK (understaffed_sales_at_risk_pct BETWEEN 0 AND 200),
    preference_weight_cents INTEGER NOT NULL CHECK (preference_weight_cents BETWEEN 0 AND 100000),
    notice_days INTEGER NOT NULL CHECK (notice_days BETWEEN 0 AND 28),
    change_premium_cents INTEGER NOT NULL CHECK (change_premium_cents BETWEEN 0 AND 100000),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
