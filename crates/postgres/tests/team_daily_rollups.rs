//! The team-wide daily totals (migration 000012) always equal the totals computed from the facts and
//! shifts themselves, through every kind of write: inserts, upserts, edits that move a row to another
//! day or department, drafts, deletes, truncation and concurrent writers.

use diesel_async::{AsyncPgConnection, SimpleAsyncConnection};

mod rollups;
use rollups::{A, B, OTHER_TEAM, count, seeded, write_concurrently};

/// Rows of the rollups and of the recomputed totals that are not in both (empty when they agree).
async fn differences(conn: &mut AsyncPgConnection) -> Vec<String> {
    rollups::differences(
        conn,
        "WITH kept_sales AS (
           SELECT team_id, date, block, food, beverage, other, CASE WHEN guest_facts > 0 THEN guests END AS guests
           FROM team_daily_sales WHERE facts > 0),
         true_sales AS (
           SELECT l.team_id, s.date, s.block, sum(s.food) AS food, sum(s.beverage) AS beverage, sum(s.other) AS other,
                  sum(s.guests) AS guests
           FROM sales_facts s JOIN locations l ON l.id = s.location_id GROUP BY 1, 2, 3),
         kept_labor AS (
           SELECT team_id, business_date, department, hours, cost FROM team_daily_labor WHERE shifts > 0),
         true_labor AS (
           SELECT l.team_id, s.business_date, s.department, sum(s.hours_worked) AS hours,
                  sum(s.hours_worked * s.hourly_wage) AS cost
           FROM schedule_shifts s JOIN locations l ON l.id = s.location_id WHERE NOT s.is_draft GROUP BY 1, 2, 3)",
        &[("sales", "kept_sales", "true_sales"), ("labor", "kept_labor", "true_labor")],
    )
    .await
}

fn shifts(location: &str, prefix: &str, days: u32, per_day: u32, draft_every: u32) -> String {
    format!(
        "INSERT INTO schedule_shifts (id, location_id, provider_shift_id, business_date, employee_name, employee_key, role,
             department, daypart, start_at, end_at, hours_worked, hourly_wage, is_draft, synced_at)
           SELECT gen_random_uuid(), '{location}', '{prefix}-' || d::date || '-' || n, d::date, 'E', 'k', 'Server',
             (ARRAY['FOH','BOH','Other'])[1 + n % 3], 'Lunch', d + interval '10 hours', d + interval '16 hours',
             5.75 + n % 4, 15.25 + n % 7, n % {draft_every} = 0, now()
           FROM generate_series('2026-11-14'::date, '2026-11-14'::date + {days} - 1, '1 day') d, generate_series(1, {per_day}) n
         ON CONFLICT (location_id, provider_shift_id) DO UPDATE SET hours_worked = excluded.hours_worked + 1,
             is_draft = NOT schedule_shifts.is_draft;"
    )
}

fn sales(location: &str, days: u32, food: &str, guests: &str) -> String {
    format!(
        "INSERT INTO sales_facts (location_id, date, block, food, beverage, other, guests)
           SELECT '{location}', d::date, b, {food}, 20.10, 5, {guests}
           FROM generate_series('2026-11-14'::date, '2026-11-14'::date + {days} - 1, '1 day') d,
                unnest(ARRAY['Lunch','Dinner','LateNight']) b
         ON CONFLICT (location_id, date, block) DO UPDATE SET food = excluded.food, guests = excluded.guests;"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_totals_follow_every_kind_of_write() {
    let (_database, mut conn) = seeded().await;
    let steps = [
        // Inserts, with drafts left out of labor.
        shifts(A, "p", 7, 5, 4),
        shifts(B, "p", 5, 3, 3),
        shifts(OTHER_TEAM, "p", 7, 2, 5),
        sales(A, 7, "100.25", "40"),
        sales(B, 3, "80", "NULL"),
        sales(OTHER_TEAM, 7, "10", "3"),
        // Upserts that update existing rows: more hours, drafts flipped both ways; new guests.
        shifts(A, "p", 9, 6, 4),
        sales(B, 5, "81.50", "CASE WHEN b = 'Lunch' THEN 12 END"),
        // Edits that move rows to another day and department, and a wage change.
        format!(
            "UPDATE schedule_shifts SET business_date = business_date + 1, department = 'BOH' WHERE location_id = '{A}' AND department = 'FOH'"
        ),
        format!("UPDATE schedule_shifts SET hourly_wage = hourly_wage * 2 WHERE location_id = '{B}'"),
        format!("UPDATE sales_facts SET date = date + 30 WHERE location_id = '{A}' AND block = 'LateNight'"),
        // Deletes: some rows, then a whole location's day.
        format!("DELETE FROM schedule_shifts WHERE location_id = '{B}' AND business_date = '2026-11-15'"),
        format!("DELETE FROM sales_facts WHERE location_id = '{A}' AND date = '2026-11-16'"),
        "DELETE FROM schedule_shifts WHERE is_draft".to_owned(),
    ];
    for (index, step) in steps.iter().enumerate() {
        conn.batch_execute(step).await.unwrap();
        assert_eq!(differences(&mut conn).await, Vec::<String>::new(), "after step {index}: {step}");
    }
    assert!(count(&mut conn, "team_daily_labor WHERE shifts > 0").await > 10);

    // Deleting every row leaves only zero totals, which readers skip.
    conn.batch_execute("DELETE FROM schedule_shifts; DELETE FROM sales_facts").await.unwrap();
    assert_eq!(count(&mut conn, "team_daily_labor WHERE shifts <> 0 OR hours <> 0 OR cost <> 0").await, 0);
    assert_eq!(count(&mut conn, "team_daily_sales WHERE facts <> 0 OR food <> 0 OR guest_facts <> 0").await, 0);

    conn.batch_execute(&(shifts(A, "t", 3, 2, 9) + &sales(A, 3, "1", "1"))).await.unwrap();
    conn.batch_execute("TRUNCATE schedule_shifts, sales_facts").await.unwrap();
    assert_eq!(count(&mut conn, "team_daily_labor").await + count(&mut conn, "team_daily_sales").await, 0);

    // A team's deletion takes its totals with it.
    conn.batch_execute(&(shifts(A, "u", 2, 2, 9) + &sales(A, 2, "1", "1") + "DELETE FROM teams WHERE id = 'org_1'"))
        .await
        .unwrap();
    assert_eq!(count(&mut conn, "team_daily_labor").await + count(&mut conn, "team_daily_sales").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_writers_of_one_team_and_day_lose_nothing() {
    let (database, mut conn) = seeded().await;
    // Eight transactions, two locations, the same days: each first total is raced for.
    write_concurrently(database.url(), |n, location| {
        shifts(location, &format!("w{n}"), 4, 25, 7) + &sales(location, 4, &format!("{n}.5"), "2")
    })
    .await;
    assert_eq!(differences(&mut conn).await, Vec::<String>::new());
    assert_eq!(count(&mut conn, "schedule_shifts").await, 8 * 4 * 25);
}
