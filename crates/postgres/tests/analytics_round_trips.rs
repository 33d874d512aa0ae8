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

/// The week's rows are read by position: every column lands in its own field, in both scopes (the
/// sales sums, the labor sums and the goals' three targets all differ, so a swap shows).
#[tokio::test(flavor = "multi_thread")]
async fn each_column_of_the_week_lands_in_its_own_field() {
    use opsd_core::Decimal;
    use opsd_optimization::{Block, Department};
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 1).await;
    conn.batch_execute(&format!(
        "UPDATE sales_facts SET guests = 7;
         INSERT INTO labor_goals (team_id, location_id, day_of_week, sales_goal, labor_pct_target, splh_target)
           VALUES ('org_1', NULL, 2, 1000, 30, 55), ('org_1', '{LOCATION}', 3, 2000, 25, 60);"
    ))
    .await
    .unwrap();
    let week = Week::starting("weekOf", date!(2026 - 11 - 14)).unwrap();
    let location = LocationId(LOCATION.parse().unwrap());
    for scope in [None, Some(location)] {
        let data = PgAnalyticsStore::week_on(&mut conn, &TeamId::new("org_1"), scope, week).await.unwrap().unwrap();
        let sale = data.sales.iter().find(|s| s.date == date!(2026 - 11 - 14) && s.block == Block::Dinner).unwrap();
        assert_eq!((sale.food, sale.beverage, sale.other, sale.guests), (100.into(), 20.into(), 5.into(), Some(7)));
        // Day 1's one shift is n = 1: BOH, 6 hours at 15.
        let labor = data.labor.iter().find(|l| l.date == date!(2026 - 11 - 14)).unwrap();
        assert_eq!((labor.department, labor.hours, labor.cost), (Department::Boh, Decimal::from(6), Decimal::from(90)));
        let team_goal = data.goals.iter().find(|g| g.location_id.is_none()).unwrap();
        assert_eq!(
            (team_goal.day_of_week, team_goal.sales_goal, team_goal.labor_pct_target, team_goal.splh_target),
            (2, 1000.into(), 30.into(), 55.into())
        );
        let own_goal = data.goals.iter().find(|g| g.location_id.is_some());
        match scope {
            None => assert!(own_goal.is_none(), "the team's week reads its defaults only"),
            Some(location) => {
                let own = own_goal.unwrap();
                assert_eq!(own.location_id, Some(location));
                assert_eq!(
                    (own.day_of_week, own.sales_goal, own.labor_pct_target, own.splh_target),
                    (3, 2000.into(), 25.into(), 60.into())
                );
            }
        }
    }
}
