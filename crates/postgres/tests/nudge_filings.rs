//! The compliance, reminder and heroes jobs read every location's filings (or hero mentions) in one
//! round trip, store every location's week in one more and find the nudges sent before in one
//! more, whatever the number of locations; each location's shifts are read in its own time zone.

mod support;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use opsd_core::LocationId;
use opsd_nudges::{FilingScope, Filings, NudgeKey, NudgeStore, WeekCompliance};
use opsd_postgres::PgNudgeStore;
use opsd_reports::ReportShift;
use opsd_test_db::{RoundTrips, TestDatabase};
use support::{on_one_thread, one_connection};
use time::macros::{date, datetime};
use uuid::Uuid;

const LOCATIONS: u128 = 30;

fn location(n: u128) -> LocationId {
    LocationId(Uuid::from_u128(0xaaaa_0000 + n))
}

/// 30 locations (the even ones in Chicago, the odd ones in UTC), each with, in the week of
/// 2026-11-14: a shift starting 2026-11-14 23:30 UTC, a draft shift, a shift the week after, a
/// morning report (hero "Ann"), a manager report, and a report the week after (hero "Ben").
async fn seeded() -> TestDatabase {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1');
         INSERT INTO locations (id, team_id, name, slug, timezone)
           SELECT ('00000000-0000-0000-0000-0000aaaa' || lpad(to_hex(n), 4, '0'))::uuid, 'org_1',
                  'L' || n, 'l' || n, CASE WHEN n % 2 = 0 THEN 'America/Chicago' ELSE 'UTC' END
           FROM generate_series(0, {last}) n;
         INSERT INTO schedule_shifts (id, location_id, provider_shift_id, business_date, employee_name, employee_key, role,
             department, daypart, start_at, end_at, hours_worked, hourly_wage, is_draft, synced_at)
           SELECT gen_random_uuid(), l.id, s.key, s.day, 'E', 'k', 'Server', 'FOH', 'Dinner', s.start_at,
                  s.start_at + interval '6 hours', 6, 15, s.draft, now()
           FROM locations l, (VALUES ('a', '2026-11-14'::date, '2026-11-14 23:30+00'::timestamptz, false),
                                     ('b', '2026-11-15', '2026-11-15 12:00+00', true),
                                     ('c', '2026-11-21', '2026-11-21 12:00+00', false)) s (key, day, start_at, draft);
         INSERT INTO shift_reports (id, team_id, location_id, date, shift, actual_sales, goal_sales, hero, submitted_by, created_at)
           SELECT gen_random_uuid(), 'org_1', l.id, d.day, 'morning', 100, 100, d.hero, 'user_1', now()
           FROM locations l, (VALUES ('2026-11-16'::date, 'Ann'), ('2026-11-22', 'Ben')) d (day, hero);
         INSERT INTO manager_reports (id, team_id, location_id, date, total_sales, submitted_by, created_at)
           SELECT gen_random_uuid(), 'org_1', l.id, '2026-11-20', 100, 'user_1', now() FROM locations l;",
        last = LOCATIONS - 1
    ))
    .await
    .unwrap();
    database
}

fn week_of(n: u128) -> FilingScope {
    FilingScope {
        location: location(n),
        timezone: if n.is_multiple_of(2) { "America/Chicago" } else { "UTC" }.into(),
        from: date!(2026 - 11 - 14),
        to: date!(2026 - 11 - 20),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_locations_filings_are_read_in_one_round_trip_in_its_own_time_zone() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let (filings, round_trips) = on_one_thread(async move || {
        let store = PgNudgeStore::new(one_connection(counter.url()));
        // The first call opens the connection and prepares the statement.
        store.filings(&[week_of(0)]).await.unwrap();
        counter.reset();
        let scopes: Vec<FilingScope> = (0..LOCATIONS).map(week_of).collect();
        let filings = store.filings(&scopes).await.unwrap();
        (filings, counter.count())
    })
    .await;
    assert_eq!(round_trips, 1, "30 locations' filings in one round trip");
    assert_eq!(filings.len(), LOCATIONS as usize);
    let expected = |local_hour| Filings {
        // The draft shift and the next week's shift are left out.
        shift_starts: vec![(date!(2026 - 11 - 14), local_hour)],
        shift_reports: vec![(date!(2026 - 11 - 16), ReportShift::Morning)],
        manager_reports: vec![date!(2026 - 11 - 20)],
    };
    // 23:30 UTC is 17:30 in Chicago.
    assert_eq!(filings[&location(0)], expected(17));
    assert_eq!(filings[&location(1)], expected(23));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_location_with_nothing_on_its_dates_has_no_filings_and_no_scope_reads_nothing() {
    let database = seeded().await;
    let store = PgNudgeStore::new(one_connection(database.url()));
    let later = FilingScope { from: date!(2026 - 12 - 05), to: date!(2026 - 12 - 11), ..week_of(0) };
    assert!(store.filings(&[later]).await.unwrap().is_empty());
    assert!(store.filings(&[]).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn every_locations_hero_mentions_of_its_week_are_read_in_one_round_trip() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let (mentions, round_trips) = on_one_thread(async move || {
        let store = PgNudgeStore::new(one_connection(counter.url()));
        store.hero_mentions(&[week_of(0)]).await.unwrap();
        counter.reset();
        let scopes: Vec<FilingScope> = (0..LOCATIONS).map(week_of).collect();
        let mentions = store.hero_mentions(&scopes).await.unwrap();
        (mentions, counter.count())
    })
    .await;
    assert_eq!(round_trips, 1);
    assert_eq!(mentions.len(), LOCATIONS as usize);
    // Ben's report is the week after.
    assert!(mentions.values().all(|names| names == &["Ann".to_owned()]), "{mentions:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn which_nudges_were_sent_before_is_one_round_trip_in_the_order_asked() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let (before, round_trips) = on_one_thread(async move || {
        let store = PgNudgeStore::new(one_connection(counter.url()));
        let key = |kind: &'static str, target: &str, period: &str| NudgeKey {
            kind,
            target: target.into(),
            period: period.into(),
        };
        let at = datetime!(2026-11-23 14:00 UTC);
        let team = opsd_core::TeamId::new("org_1");
        assert!(store.record_nudge(&key("compliance_staff", "loc_2", "2026-11-14"), &team, at).await.unwrap());
        // The first call prepares the statement.
        store.nudged_before(&[key("compliance_staff", "loc_0", "2026-11-14")]).await.unwrap();
        counter.reset();
        let before = store
            .nudged_before(&[
                key("compliance_staff", "loc_1", "2026-11-14"),
                key("compliance_staff", "loc_2", "2026-11-14"),
                key("compliance_manager", "loc_2", "2026-11-14"),
                key("compliance_staff", "loc_2", "2026-11-07"),
            ])
            .await
            .unwrap();
        (before, counter.count())
    })
    .await;
    assert_eq!(before, [false, true, false, false], "only the same kind, target and period");
    assert_eq!(round_trips, 1);
}

fn week(n: u128, filed_shift: u32) -> WeekCompliance {
    WeekCompliance {
        location: location(n),
        location_name: format!("L{n}"),
        week_start: date!(2026 - 11 - 14),
        expected_shift: 7,
        filed_shift,
        expected_manager: 7,
        filed_manager: 6,
        missing: Vec::new(),
        days: Vec::new(),
    }
}

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Stored {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    weeks: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    filed: i64,
}

#[tokio::test(flavor = "multi_thread")]
async fn every_locations_week_is_stored_in_one_round_trip_and_replaced_when_computed_again() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let round_trips = on_one_thread(async move || {
        let store = PgNudgeStore::new(one_connection(counter.url()));
        store.save_compliance(&[week(0, 1)], datetime!(2026-11-23 14:00 UTC)).await.unwrap();
        counter.reset();
        let weeks: Vec<WeekCompliance> = (0..LOCATIONS).map(|n| week(n, 3)).collect();
        store.save_compliance(&weeks, datetime!(2026-11-23 15:00 UTC)).await.unwrap();
        let round_trips = counter.count();
        store.save_compliance(&[], datetime!(2026-11-23 16:00 UTC)).await.unwrap();
        assert_eq!(counter.count(), round_trips, "nothing to store is no statement");
        round_trips
    })
    .await;
    assert_eq!(round_trips, 1);
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    let stored: Stored = diesel::sql_query(
        "SELECT count(*) AS weeks, sum(filed_shift_reports)::bigint AS filed FROM compliance_weeks \
         WHERE week_start = '2026-11-14' AND expected_shift_reports = 7 AND filed_manager_reports = 6 \
           AND computed_at = '2026-11-23 15:00+00'",
    )
    .get_result(&mut conn)
    .await
    .unwrap();
    // Location 0's first week was replaced: 30 rows, each with 3 filed.
    assert_eq!(stored, Stored { weeks: LOCATIONS as i64, filed: 3 * LOCATIONS as i64 });
}
