-- The labor rule, written once: a shift is labor unless it is a draft; its hours are the hours
-- worked the domain stored (end - start - unpaid breaks, rounded per shift), its cost those hours
-- times the wage. A draft answers NULL, which sums skip. The team rollup trigger and the
-- per-location report query both read labor through these two functions, given a shift's
-- `is_draft`, `hours_worked` and `hourly_wage`.
CREATE FUNCTION labor_hours(is_draft BOOLEAN, hours_worked NUMERIC) RETURNS NUMERIC
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN NOT is_draft THEN hours_worked END $$;

CREATE FUNCTION labor_cost(is_draft BOOLEAN, hours_worked NUMERIC, hourly_wage NUMERIC) RETURNS NUMERIC
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT labor_hours(is_draft, hours_worked) * hourly_wage $$;

-- As in migration 000012, with labor read through the functions above.
CREATE OR REPLACE FUNCTION team_daily_labor_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO team_daily_labor AS t (team_id, business_date, department, shifts, hours, cost)
        SELECT l.team_id, d.business_date, d.department, sum(d.sign),
               sum(d.sign * labor_hours(d.is_draft, d.hours_worked)),
               sum(d.sign * labor_cost(d.is_draft, d.hours_worked, d.hourly_wage))
        FROM (%s) d JOIN locations l ON l.id = d.location_id
        WHERE labor_hours(d.is_draft, d.hours_worked) IS NOT NULL
        GROUP BY l.team_id, d.business_date, d.department
        ORDER BY l.team_id, d.business_date, d.department
        ON CONFLICT (team_id, business_date, department) DO UPDATE SET
            shifts = t.shifts + excluded.shifts, hours = t.hours + excluded.hours, cost = t.cost + excluded.cost
    $q$, rollup_deltas(TG_OP));
    RETURN NULL;
END
$$;
