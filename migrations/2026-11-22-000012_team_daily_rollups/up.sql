-- Team-wide daily totals for the optimization report, so a team's week reads 21 sales and at most 21
-- labor rows instead of every location's facts and shifts. They are kept exact by statement-level
-- triggers that add each statement's changes as deltas (numeric sums, so no drift), which is safe
-- under concurrency: `ON CONFLICT DO UPDATE SET x = x + delta` serializes on the total's row lock
-- and always applies to the latest version. Deltas are applied in key order, so two writers of the
-- same team take those locks in the same order and cannot deadlock on them. Totals whose count falls to zero stay as rows with zero
-- counts; readers skip them. A location's own week is read from the facts and shifts directly.
CREATE TABLE team_daily_sales (
    team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    date          DATE NOT NULL,
    block         TEXT NOT NULL,
    facts         INTEGER NOT NULL,
    food          NUMERIC NOT NULL,
    beverage      NUMERIC NOT NULL,
    other         NUMERIC NOT NULL,
    guests        BIGINT NOT NULL,
    guest_facts   INTEGER NOT NULL,
    PRIMARY KEY (team_id, date, block)
);

CREATE TABLE team_daily_labor (
    team_id        TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    business_date  DATE NOT NULL,
    department     TEXT NOT NULL,
    shifts         INTEGER NOT NULL,
    hours          NUMERIC NOT NULL,
    cost           NUMERIC NOT NULL,
    PRIMARY KEY (team_id, business_date, department)
);

-- The changed rows of a statement as signed deltas: +1 for each new row, -1 for each old one.
-- PostgreSQL allows transition tables on single-event triggers only, so each table has three
-- triggers sharing one function, which picks its source by the event.
CREATE FUNCTION rollup_deltas(op TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE op
        WHEN 'INSERT' THEN 'SELECT 1 AS sign, * FROM new_rows'
        WHEN 'DELETE' THEN 'SELECT -1 AS sign, * FROM old_rows'
        ELSE 'SELECT 1 AS sign, * FROM new_rows UNION ALL SELECT -1 AS sign, * FROM old_rows'
    END
$$;

-- Rows whose location is already gone (a team's cascading delete) have no team to total; the
-- team's totals go with the team.
CREATE FUNCTION team_daily_sales_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$
        INSERT INTO team_daily_sales AS t (team_id, date, block, facts, food, beverage, other, guests, guest_facts)
        SELECT l.team_id, d.date, d.block, sum(d.sign), sum(d.sign * d.food), sum(d.sign * d.beverage),
               sum(d.sign * d.other), coalesce(sum(d.sign * d.guests), 0),
               sum(CASE WHEN d.guests IS NULL THEN 0 ELSE d.sign END)
        FROM (%s) d JOIN locations l ON l.id = d.location_id
        GROUP BY l.team_id, d.date, d.block
        ORDER BY l.team_id, d.date, d.block
        ON CONFLICT (team_id, date, block) DO UPDATE SET
            facts = t.facts + excluded.facts, food = t.food + excluded.food,
            beverage = t.beverage + excluded.beverage, other = t.other + excluded.other,
            guests = t.guests + excluded.guests, guest_facts = t.guest_facts + excluded.guest_facts
    $q$, rollup_deltas(TG_OP));
    RETURN NULL;
END
$$;

-- Drafts are not labor: only non-draft shifts are totalled.
CREATE FUNCTION team_daily_labor_apply() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION team_daily_sales_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM team_daily_sales;
    RETURN NULL;
END
$$;

CREATE FUNCTION team_daily_labor_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM team_daily_labor;
    RETURN NULL;
END
$$;

CREATE TRIGGER team_daily_sales_insert AFTER INSERT ON sales_facts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_sales_apply();
CREATE TRIGGER team_daily_sales_update AFTER UPDATE ON sales_facts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_sales_apply();
CREATE TRIGGER team_daily_sales_delete AFTER DELETE ON sales_facts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_sales_apply();
CREATE TRIGGER team_daily_sales_truncate AFTER TRUNCATE ON sales_facts
    FOR EACH STATEMENT EXECUTE FUNCTION team_daily_sales_clear();

CREATE TRIGGER team_daily_labor_insert AFTER INSERT ON schedule_shifts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_labor_apply();
CREATE TRIGGER team_daily_labor_update AFTER UPDATE ON schedule_shifts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_labor_apply();
CREATE TRIGGER team_daily_labor_delete AFTER DELETE ON schedule_shifts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION team_daily_labor_apply();
CREATE TRIGGER team_daily_labor_truncate AFTER TRUNCATE ON schedule_shifts
    FOR EACH STATEMENT EXECUTE FUNCTION team_daily_labor_clear();

-- The totals of what is already there.
INSERT INTO team_daily_sales (team_id, date, block, facts, food, beverage, other, guests, guest_facts)
SELECT l.team_id, s.date, s.block, count(*), sum(s.food), sum(s.beverage), sum(s.other), coalesce(sum(s.guests), 0), count(s.guests)
FROM sales_facts s JOIN locations l ON l.id = s.location_id
GROUP BY l.team_id, s.date, s.block;

INSERT INTO team_daily_labor (team_id, business_date, department, shifts, hours, cost)
SELECT l.team_id, s.business_date, s.department, count(*), sum(s.hours_worked), sum(s.hours_worked * s.hourly_wage)
FROM schedule_shifts s JOIN locations l ON l.id = s.location_id
WHERE NOT s.is_draft
GROUP BY l.team_id, s.business_date, s.department;
