-- The optimization report's week reads as functions. PL/pgSQL keeps each statement's plan for its
-- session, so behind a transaction pooler (no named prepared statements: every statement is parsed
-- and planned again) the plan is made once per server connection, not once per request: planning
-- was four fifths of the statement's cost. The rows are those of the statements they replace
-- (crates/postgres/src/analytics.rs): kind 0 a goal with the scope check, 1 a sales total of a
-- (date, block), 2 a labor total of a (date, department).

-- The whole team's week from its daily totals (migration 000012); its goals are the team's defaults.
CREATE FUNCTION team_week(p_team TEXT, p_first DATE, p_last DATE)
RETURNS TABLE (kind INT2, ok BOOLEAN, location_id UUID, day_of_week INT2, date DATE, label TEXT,
               a NUMERIC, b NUMERIC, c NUMERIC, guests INT8)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        WITH scope AS (SELECT EXISTS (SELECT 1 FROM teams t WHERE t.id = p_team) AS ok)
        SELECT 0::int2, scope.ok, g.location_id, g.day_of_week, NULL::date, NULL::text,
               g.sales_goal::numeric, g.labor_pct_target::numeric, g.splh_target::numeric, NULL::int8
        FROM scope LEFT JOIN labor_goals g ON scope.ok AND g.team_id = p_team AND g.location_id IS NULL
        UNION ALL
        SELECT 1::int2, NULL, NULL, NULL, s.date, s.block, s.food, s.beverage, s.other,
               CASE WHEN s.guest_facts > 0 THEN s.guests END
        FROM team_daily_sales s WHERE s.team_id = p_team AND s.date BETWEEN p_first AND p_last AND s.facts > 0
        UNION ALL
        SELECT 2::int2, NULL, NULL, NULL, l.business_date, l.department, l.hours, l.cost, NULL, NULL
        FROM team_daily_labor l
        WHERE l.team_id = p_team AND l.business_date BETWEEN p_first AND p_last AND l.shifts > 0;
END
$$;

-- One location's week: its facts per (date, block), its shifts per (date, department) by the labor
-- rule (migration 000016), its goals and the team's defaults; a foreign location reads nothing.
CREATE FUNCTION location_week(p_location UUID, p_team TEXT, p_first DATE, p_last DATE)
RETURNS TABLE (kind INT2, ok BOOLEAN, location_id UUID, day_of_week INT2, date DATE, label TEXT,
               a NUMERIC, b NUMERIC, c NUMERIC, guests INT8)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        WITH scope AS (
            SELECT EXISTS (SELECT 1 FROM teams t WHERE t.id = p_team)
               AND EXISTS (SELECT 1 FROM locations l WHERE l.id = p_location AND l.team_id = p_team) AS ok)
        SELECT 0::int2, scope.ok, g.location_id, g.day_of_week, NULL::date, NULL::text,
               g.sales_goal::numeric, g.labor_pct_target::numeric, g.splh_target::numeric, NULL::int8
        FROM scope LEFT JOIN labor_goals g
          ON scope.ok AND g.team_id = p_team AND (g.location_id IS NULL OR g.location_id = p_location)
        UNION ALL
        SELECT 1::int2, NULL, NULL, NULL, f.date, f.block, sum(f.food), sum(f.beverage), sum(f.other),
               sum(f.guests)::int8
        FROM sales_facts f JOIN locations l ON l.id = f.location_id
        WHERE f.location_id = p_location AND l.team_id = p_team AND f.date BETWEEN p_first AND p_last
        GROUP BY f.date, f.block
        UNION ALL
        SELECT 2::int2, NULL, NULL, NULL, s.business_date, s.department,
               sum(labor_hours(s.is_draft, s.hours_worked)), sum(labor_cost(s.is_draft, s.hours_worked, s.hourly_wage)),
               NULL, NULL
        FROM schedule_shifts s JOIN locations l ON l.id = s.location_id
        WHERE s.location_id = p_location AND l.team_id = p_team AND s.business_date BETWEEN p_first AND p_last
          AND labor_hours(s.is_draft, s.hours_worked) IS NOT NULL
        GROUP BY s.business_date, s.department;
END
$$;
