//! Worked labor (migration 000029): each counted punch's overtime and cost, and the team's daily
//! totals, always equal what the overtime rule computes from the punches themselves, through every
//! kind of write and concurrent syncs of one employee's week at two locations.

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

mod rollups;
use rollups::{A, B, OTHER_TEAM, count, seeded, write_concurrently};

/// Rows kept and rows recomputed from scratch that are not in both (empty when they agree). The
/// recomputation is the rule as the variance report states it: per employee and Saturday week of
/// the team, in clock-in order, the hours past 40; cost (hours + overtime / 2) × wage to the cent.
async fn differences(conn: &mut AsyncPgConnection) -> Vec<String> {
    rollups::differences(
        conn,
        "WITH counted AS (
           SELECT p.*, l.team_id,
                  p.business_date - ((extract(dow FROM p.business_date)::int + 1) % 7) AS week_start
           FROM time_punches p JOIN locations l ON l.id = p.location_id WHERE p.worked_hours IS NOT NULL),
         running AS (
           SELECT c.*, sum(c.worked_hours) OVER (PARTITION BY c.team_id, c.employee_key, c.week_start
                     ORDER BY c.clocked_in, c.location_id, c.provider_punch_id) AS through
           FROM counted c),
         true_punches AS (
           SELECT location_id, provider_punch_id, worked_hours AS hours,
                  greatest(through - 40, 0) - greatest(through - worked_hours - 40, 0) AS overtime_hours,
                  hourly_wage
           FROM running),
         true_punch_rows AS (
           SELECT location_id, provider_punch_id, hours, overtime_hours,
                  round((hours + overtime_hours / 2) * hourly_wage, 2) AS cost
           FROM true_punches),
         kept_punch_rows AS (
           SELECT location_id, provider_punch_id, hours, overtime_hours, cost FROM punch_labor),
         true_days AS (
           SELECT l.team_id, p.business_date, p.department, sum(t.hours) AS hours,
                  sum(t.overtime_hours) AS overtime_hours, sum(t.cost) AS cost, sum(t.hours * p.hourly_wage) AS base_cost
           FROM true_punch_rows t JOIN time_punches p USING (location_id, provider_punch_id)
           JOIN locations l ON l.id = p.location_id GROUP BY 1, 2, 3),
         kept_days AS (
           SELECT team_id, business_date, department, hours, overtime_hours, cost, base_cost
           FROM team_daily_worked WHERE punches > 0)",
        &[("punch", "kept_punch_rows", "true_punch_rows"), ("day", "kept_days", "true_days")],
    )
    .await
}

/// Punches of `employees` employees at a location, one a day from 2026-11-14 for `days` days, of
/// 8.25 to 11.25 hours; every `unapproved_every`th one not approved (not counted). An upsert.
fn punches(location: &str, prefix: &str, days: u32, employees: u32, unapproved_every: u32) -> String {
    format!(
        "INSERT INTO time_punches (location_id, provider_punch_id, employee_key, department, business_date,
             clocked_in, clocked_out, approved, unpaid_break_minutes, worked_hours, hourly_wage, synced_at)
           SELECT '{location}', '{prefix}-' || d::date || '-' || e, 'e' || e, (ARRAY['FOH','BOH','Other'])[1 + e % 3],
             d::date, d + interval '9 hours' + e * interval '1 minute', d + interval '20 hours', e % {unapproved_every} <> 0, 30,
             CASE WHEN e % {unapproved_every} <> 0 THEN 8.25 + (e + extract(day FROM d)::int) % 4 END, 15.25 + e % 7, now()
           FROM generate_series('2026-11-14'::date, '2026-11-14'::date + {days} - 1, '1 day') d, generate_series(1, {employees}) e
         ON CONFLICT (location_id, provider_punch_id) DO UPDATE SET worked_hours = excluded.worked_hours + 1,
             approved = excluded.approved;"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn overtime_crosses_locations_and_falls_on_the_punch_that_crosses_forty() {
    let (_database, mut conn) = seeded().await;
    // Saturday to Tuesday 9 h at B, then 10 h at A on Friday 2026-11-20: 6 of those are past 40.
    conn.batch_execute(&format!(
        "INSERT INTO time_punches (location_id, provider_punch_id, employee_key, department, business_date,
             clocked_in, clocked_out, approved, unpaid_break_minutes, worked_hours, hourly_wage, synced_at)
           SELECT '{B}', 'b' || n, 'cook', 'BOH', '2026-11-14'::date + n, '2026-11-14 09:00Z'::timestamptz + n * interval '1 day',
             '2026-11-14 18:00Z'::timestamptz + n * interval '1 day', true, 0, 9, 20, now()
           FROM generate_series(0, 3) n;
         INSERT INTO time_punches VALUES ('{A}', 'a1', 'cook', 'BOH', '2026-11-20', '2026-11-20 09:00Z', '2026-11-20 19:00Z',
             true, 0, 10, 20, now());
         -- The next week starts again from zero.
         INSERT INTO time_punches VALUES ('{A}', 'a2', 'cook', 'BOH', '2026-11-21', '2026-11-21 09:00Z', '2026-11-21 19:00Z',
             true, 0, 10, 20, now());"
    ))
    .await
    .unwrap();
    #[derive(QueryableByName, Debug, PartialEq)]
    struct Kept {
        #[diesel(sql_type = Text)]
        row: String,
    }
    let kept: Vec<Kept> = diesel::sql_query(
        "SELECT provider_punch_id || ' ' || overtime_hours::numeric(8, 2) || ' ' || cost::numeric(10, 2) AS row FROM punch_labor
         WHERE provider_punch_id LIKE 'a%' ORDER BY 1",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let kept: Vec<&str> = kept.iter().map(|k| k.row.as_str()).collect();
    assert_eq!(kept, ["a1 6.00 260.00", "a2 0.00 200.00"], "10 h × $20 plus 6 h × $10 premium; a new week");
    assert_eq!(differences(&mut conn).await, Vec::<String>::new());

    // Moving a Tuesday punch out of the week takes Friday's overtime down with it.
    conn.batch_execute(&format!("DELETE FROM time_punches WHERE location_id = '{B}' AND provider_punch_id = 'b3'"))
        .await
        .unwrap();
    let overtime: Vec<Kept> = diesel::sql_query(
        "SELECT overtime_hours::numeric(8, 2)::text AS row FROM punch_labor WHERE provider_punch_id = 'a1'",
    )
    .load(&mut conn)
    .await
    .unwrap();
    assert_eq!(overtime, [Kept { row: "0.00".into() }]);
    assert_eq!(differences(&mut conn).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_totals_follow_every_kind_of_write() {
    let (_database, mut conn) = seeded().await;
    let steps = [
        punches(A, "p", 14, 12, 5),
        punches(B, "p", 10, 9, 4),
        punches(OTHER_TEAM, "p", 7, 3, 6),
        // Upserts: more hours, approval flipped.
        punches(A, "p", 16, 12, 3),
        // Edits that move punches to another day, week and department, a wage change, an unapproval.
        format!(
            "UPDATE time_punches SET business_date = business_date + 3, department = 'BOH' WHERE location_id = '{A}' AND department = 'FOH'"
        ),
        format!("UPDATE time_punches SET hourly_wage = hourly_wage * 2 WHERE location_id = '{B}'"),
        format!(
            "UPDATE time_punches SET worked_hours = NULL, approved = false WHERE location_id = '{B}' AND employee_key = 'e2'"
        ),
        format!("UPDATE time_punches SET employee_key = 'e1' WHERE location_id = '{B}' AND employee_key = 'e3'"),
        // Deletes: some punches, then a whole day.
        format!("DELETE FROM time_punches WHERE location_id = '{B}' AND business_date = '2026-11-15'"),
        format!("DELETE FROM time_punches WHERE location_id = '{A}' AND employee_key IN ('e4', 'e5')"),
    ];
    for (index, step) in steps.iter().enumerate() {
        conn.batch_execute(step).await.unwrap();
        assert_eq!(differences(&mut conn).await, Vec::<String>::new(), "after step {index}: {step}");
    }
    assert!(count(&mut conn, "punch_labor WHERE overtime_hours > 0").await > 10, "the data crosses 40 hours");

    conn.batch_execute("DELETE FROM time_punches").await.unwrap();
    assert_eq!(count(&mut conn, "punch_labor").await, 0);
    assert_eq!(count(&mut conn, "team_daily_worked WHERE punches <> 0 OR hours <> 0 OR cost <> 0").await, 0);

    conn.batch_execute(&punches(A, "t", 3, 2, 9)).await.unwrap();
    conn.batch_execute("TRUNCATE time_punches").await.unwrap();
    assert_eq!(count(&mut conn, "punch_labor").await, 0);
    assert_eq!(count(&mut conn, "team_daily_worked").await, 0);

    // A team's deletion takes its totals with it.
    conn.batch_execute(&(punches(A, "u", 2, 2, 9) + "DELETE FROM teams WHERE id = 'org_1'")).await.unwrap();
    assert_eq!(count(&mut conn, "punch_labor").await + count(&mut conn, "team_daily_worked").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_syncs_of_one_employees_week_at_two_locations_count_every_hour_once() {
    let (database, mut conn) = seeded().await;
    // Eight transactions at two locations, the same employees and weeks: each employee-week's overtime
    // depends on punches another transaction writes at the same time.
    write_concurrently(database.url(), |n, location| punches(location, &format!("w{n}"), 14, 10, 7)).await;
    assert_eq!(differences(&mut conn).await, Vec::<String>::new());
    assert_eq!(count(&mut conn, "time_punches").await, 8 * 14 * 10);
    assert!(count(&mut conn, "punch_labor WHERE overtime_hours > 0").await > 50);
}
