//! An uncached optimization report costs one database statement, however many shifts and days the
//! week holds: the scope, the goals and both kinds of facts come back as rows of one query.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::{LocationId, TeamId};
use opsd_optimization::Week;
use opsd_postgres::PgAnalyticsStore;
use opsd_test_db::{CountQueries, TestDatabase};
use time::macros::date;

const LOCATION: &str = "00000000-0000-7000-8000-00000000aaaa";

/// `shifts_per_day` shifts and three sales blocks on each day of the week of 2026-11-14.
async fn seed(conn: &mut AsyncPgConnection, shifts_per_day: u32) {
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1') ON CONFLICT DO NOTHING;
         INSERT INTO locations (id, team_id, name, slug, timezone) VALUES ('{LOCATION}', 'org_1', 'A', 'a', 'UTC')
           ON CONFLICT DO NOTHING;
         DELETE FROM schedule_shifts; DELETE FROM sales_facts;
         INSERT INTO sales_facts (location_id, date, block, food, beverage, other)
           SELECT '{LOCATION}', d::date, b, 100, 20, 5
           FROM generate_series('2026-11-14'::date, '2026-11-20'::date, '1 day') d, unnest(ARRAY['Lunch','Dinner','LateNight']) b;
         INSERT INTO schedule_shifts (id, location_id, provider_shift_id, business_date, employee_name, employee_key, role,
             department, daypart, start_at, end_at, hours_worked, hourly_wage, is_draft, synced_at)
           SELECT gen_random_uuid(), '{LOCATION}', d::date || '-' || n, d::date, 'E', 'k', 'Server',
             (ARRAY['FOH','BOH','Other'])[1 + n % 3], 'Lunch', d + interval '10 hours', d + interval '16 hours', 6, 15, false, now()
           FROM generate_series('2026-11-14'::date, '2026-11-20'::date, '1 day') d, generate_series(1, {shifts_per_day}) n;"
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_uncached_report_costs_one_statement_whatever_the_data() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    let week = Week::starting("weekOf", date!(2026 - 11 - 14)).unwrap();
    let team = TeamId::new("org_1");
    for shifts_per_day in [1, 400] {
        seed(&mut conn, shifts_per_day).await;
        let queries = Arc::new(AtomicUsize::new(0));
        conn.set_instrumentation(CountQueries(queries.clone()));
        for location in [None, Some(LocationId(LOCATION.parse().unwrap()))] {
            queries.store(0, Ordering::SeqCst);
            let data = PgAnalyticsStore::week_on(&mut conn, &team, location, week).await.unwrap().unwrap();
            assert_eq!(queries.load(Ordering::SeqCst), 1, "{shifts_per_day} shifts a day, location {location:?}");
            assert_eq!(data.sales.len(), 21);
            let hours: opsd_core::Decimal = data.labor.iter().map(|l| l.hours).sum();
            assert_eq!(hours, opsd_core::Decimal::from(6 * 7 * shifts_per_day));
        }
        conn.set_instrumentation(None::<CountQueries>);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_scope_costs_the_same_and_reads_nothing() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 1).await;
    let queries = Arc::new(AtomicUsize::new(0));
    conn.set_instrumentation(CountQueries(queries.clone()));
    let week = Week::starting("weekOf", date!(2026 - 11 - 14)).unwrap();
    let location = Some(LocationId(LOCATION.parse().unwrap()));
    let foreign = PgAnalyticsStore::week_on(&mut conn, &TeamId::new("org_2"), location, week).await;
    assert!(foreign.unwrap().is_none());
    let unknown = PgAnalyticsStore::week_on(&mut conn, &TeamId::new("org_nobody"), None, week).await;
    assert!(unknown.unwrap().is_none());
    assert_eq!(queries.load(Ordering::SeqCst), 2, "one statement each");
}
