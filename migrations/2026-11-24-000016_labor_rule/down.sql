CREATE OR REPLACE FUNCTION team_daily_labor_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO team_daily_labor AS t (team_id, business_date, department, shifts, hours, cost)
        SELECT l.team_id, d.business_date, d.department, sum(d.sign), sum(d.sign * d.hours_worked),
               sum(d.sign * d.hours_worked * d.hourly_wage)
        FROM (%s) d JOIN locations l ON l.id = d.location_id
        WHERE NOT d.is_draft
        GROUP BY l.team_id, d.business_date, d.department
        ORDER BY l.team_id, d.business_date, d.department
        ON CONFLICT (team_id, business_date, department) DO UPDATE SET
            shifts = t.shifts + excluded.shifts, hours = t.hours + excluded.hours, cost = t.cost + excluded.cost
    $q$, rollup_deltas(TG_OP));
    RETURN NULL;
END
$$;

DROP FUNCTION labor_cost(BOOLEAN, NUMERIC, NUMERIC);
DROP FUNCTION labor_hours(BOOLEAN, NUMERIC);
