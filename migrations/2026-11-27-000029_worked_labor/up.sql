-- Worked labor rolled up like scheduled labor (migration 000012), so a team's variance and forecast
-- read a week's totals instead of every punch of every location.
--
-- The overtime rule, written once (FLSA): an employee's hours past 40 in the workweek (Saturday to
-- Friday, across every location of the team), falling on the punches that cross 40 in clock-in order.
-- A punch's cost is its hours × wage plus half the wage on its overtime hours, rounded to the cent
-- (half away from zero). Overtime is an employee's across the week, so one punch can change the
-- overtime of the others: `punch_labor` holds each counted punch's hours, overtime and cost, and a
-- write to punches recomputes the employee-weeks it touches. `team_daily_worked` totals
-- `punch_labor` by team, day and department with the delta triggers of migration 000012.

CREATE FUNCTION workweek_start(d DATE) RETURNS DATE
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT d - ((extract(dow FROM d)::int + 1) % 7) $$;

CREATE TABLE punch_labor (
    location_id        UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    provider_punch_id  TEXT NOT NULL,
    team_id            TEXT NOT NULL,
    employee_key       TEXT NOT NULL,
    week_start         DATE NOT NULL,
    business_date      DATE NOT NULL,
    department         TEXT NOT NULL,
    hours              NUMERIC NOT NULL,
    overtime_hours     NUMERIC NOT NULL,
    -- (hours + overtime × ½) × wage, rounded to the cent.
    cost               NUMERIC NOT NULL,
    -- hours × wage: the forecast's recent labor, which has no premium.
    base_cost          NUMERIC NOT NULL,
    PRIMARY KEY (location_id, provider_punch_id)
);
CREATE INDEX punch_labor_employee_week_idx ON punch_labor (team_id, employee_key, week_start);
CREATE INDEX punch_labor_location_date_idx ON punch_labor (location_id, business_date);
-- An employee-week's punches, read when it is recomputed.
CREATE INDEX time_punches_employee_date_idx ON time_punches (employee_key, business_date);

CREATE TABLE team_daily_worked (
    team_id         TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    business_date   DATE NOT NULL,
    department      TEXT NOT NULL,
    punches         INTEGER NOT NULL,
    hours           NUMERIC NOT NULL,
    overtime_hours  NUMERIC NOT NULL,
    cost            NUMERIC NOT NULL,
    base_cost       NUMERIC NOT NULL,
    PRIMARY KEY (team_id, business_date, department)
);

-- The counted punches of the given employee-weeks with their overtime and cost. Planned for each
-- call's arrays (EXECUTE): a plan made for any arrays scanned every punch of the team, 50 times
-- slower for one location's year than the index on (employee_key, business_date).
CREATE FUNCTION punch_labor_of(p_teams TEXT[], p_employees TEXT[], p_weeks DATE[])
RETURNS SETOF punch_labor LANGUAGE plpgsql STABLE AS $f$
BEGIN
    RETURN QUERY EXECUTE $q$
    SELECT w.location_id, w.provider_punch_id, w.team_id, w.employee_key, w.week_start, w.business_date,
           w.department, w.worked_hours, w.overtime,
           round((w.worked_hours + w.overtime * 0.5) * w.hourly_wage, 2), w.worked_hours * w.hourly_wage
    FROM (
        SELECT p.*, l.team_id, k.week_start,
               greatest(sum(p.worked_hours) OVER run - 40, 0)
                 - greatest(sum(p.worked_hours) OVER run - p.worked_hours - 40, 0) AS overtime
        FROM unnest($1, $2, $3) k (team_id, employee_key, week_start)
        JOIN time_punches p ON p.employee_key = k.employee_key
         AND p.business_date BETWEEN k.week_start AND k.week_start + 6
        JOIN locations l ON l.id = p.location_id AND l.team_id = k.team_id
        WHERE p.worked_hours IS NOT NULL
        WINDOW run AS (PARTITION BY l.team_id, p.employee_key, k.week_start
                       ORDER BY p.clocked_in, p.location_id, p.provider_punch_id ROWS UNBOUNDED PRECEDING)
    ) w $q$ USING p_teams, p_employees, p_weeks;
END
$f$;

-- Recomputes the employee-weeks a statement on `time_punches` touched: those of its new rows, and
-- those its old rows were counted in. Each employee-week is locked for the transaction first, in
-- key order, so two writers of one employee's week (two locations' syncs) recompute one after the
-- other, the second seeing the first's punches.
CREATE FUNCTION punch_labor_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    teams TEXT[];
    employees TEXT[];
    weeks DATE[];
BEGIN
    EXECUTE format($q$
        SELECT coalesce(array_agg(team_id ORDER BY team_id, employee_key, week_start), '{}'),
               coalesce(array_agg(employee_key ORDER BY team_id, employee_key, week_start), '{}'),
               coalesce(array_agg(week_start ORDER BY team_id, employee_key, week_start), '{}')
        FROM (SELECT l.team_id, d.employee_key, workweek_start(d.business_date) AS week_start
              FROM (%s) d JOIN locations l ON l.id = d.location_id
              UNION
              SELECT c.team_id, c.employee_key, c.week_start
              FROM (%s) d JOIN punch_labor c USING (location_id, provider_punch_id)) k
    $q$, CASE WHEN TG_OP = 'DELETE' THEN 'SELECT * FROM old_rows' ELSE 'SELECT * FROM new_rows' END,
         CASE WHEN TG_OP = 'INSERT' THEN 'SELECT * FROM new_rows' ELSE 'SELECT * FROM old_rows' END)
    INTO teams, employees, weeks;
    FOR i IN 1 .. cardinality(teams) LOOP
        PERFORM pg_advisory_xact_lock(hashtext('punch_labor'), hashtext(teams[i] || '/' || employees[i] || '/' || weeks[i]));
    END LOOP;
    DELETE FROM punch_labor c USING unnest(teams, employees, weeks) k (team_id, employee_key, week_start)
    WHERE c.team_id = k.team_id AND c.employee_key = k.employee_key AND c.week_start = k.week_start;
    INSERT INTO punch_labor SELECT * FROM punch_labor_of(teams, employees, weeks);
    RETURN NULL;
END
$$;

-- Truncated like the punches, which clears the team's totals too.
CREATE FUNCTION punch_labor_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE punch_labor;
    RETURN NULL;
END
$$;

-- As team_daily_labor_apply (migration 000016), over `punch_labor`.
CREATE FUNCTION team_daily_worked_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO team_daily_worked AS t (team_id, business_date, department, punches, hours, overtime_hours, cost, base_cost)
        SELECT l.team_id, d.business_date, d.department, sum(d.sign), sum(d.sign * d.hours),
               sum(d.sign * d.overtime_hours), sum(d.sign * d.cost), sum(d.sign * d.base_cost)
        FROM (%s) d JOIN locations l ON l.id = d.location_id
        GROUP BY l.team_id, d.business_date, d.department
        ORDER BY l.team_id, d.business_date, d.department
        ON CONFLICT (team_id, business_date, department) DO UPDATE SET
            punches = t.punches + excluded.punches, hours = t.hours + excluded.hours,
            overtime_hours = t.overtime_hours + excluded.overtime_hours, cost = t.cost + excluded.cost,
            base_cost = t.base_cost + excluded.base_cost
    $q$, rollup_deltas(TG_OP));
    RETURN NULL;
END
$$;

CREATE FUNCTION team_daily_worked_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM team_daily_worked;
    RETURN NULL;
END
$$;

CREATE TRIGGER punch_labor_insert AFTER INSERT ON time_punches
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION punch_labor_refresh();
CREATE TRIGGER punch_labor_update AFTER UPDATE ON time_punches
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION punch_labor_refresh();
CREATE TRIGGER punch_labor_delete AFTER DELETE ON time_punches
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION punch_labor_refresh();
CREATE TRIGGER punch_labor_truncate AFTER TRUNCATE ON time_punches
    FOR EACH STATEMENT EXECUTE FUNCTION punch_labor_clear();

CREATE TRIGGER team_daily_worked_insert AFTER INSERT ON punch_labor
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_worked_apply();
CREATE TRIGGER team_daily_worked_update AFTER UPDATE ON punch_labor
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_worked_apply();
CREATE TRIGGER team_daily_worked_delete AFTER DELETE ON punch_labor
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_worked_apply();
CREATE TRIGGER team_daily_worked_truncate AFTER TRUNCATE ON punch_labor
    FOR EACH STATEMENT EXECUTE FUNCTION team_daily_worked_clear();

-- What is already there: every employee-week with a counted punch (the triggers total them).
INSERT INTO punch_labor
SELECT c.* FROM (
    SELECT array_agg(team_id) AS teams, array_agg(employee_key) AS employees, array_agg(week_start) AS weeks
    FROM (SELECT DISTINCT l.team_id, p.employee_key, workweek_start(p.business_date) AS week_start
          FROM time_punches p JOIN locations l ON l.id = p.location_id
          WHERE p.worked_hours IS NOT NULL) k) a,
    LATERAL punch_labor_of(coalesce(a.teams, '{}'), coalesce(a.employees, '{}'), coalesce(a.weeks, '{}')) c;
