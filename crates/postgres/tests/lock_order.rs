//! Writes of many rows take their row locks in key order: two of them over the same rows, sent at
//! once in different orders, both land instead of one failing with "deadlock detected".

mod support;
use support::pool;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::{LocationId, TeamId};
use opsd_optimization::{AnalyticsStore, Block, DayGoal, SalesRow};
use opsd_postgres::PgAnalyticsStore;
use opsd_test_db::TestDatabase;
use rust_decimal::Decimal;
use time::{Date, Month};
use uuid::Uuid;

const LOCATIONS: [Uuid; 2] = [
    Uuid::from_u128(0x0000_0000_0000_7000_8000_0000_0000_00a1),
    Uuid::from_u128(0x0000_0000_0000_7000_8000_0000_0000_00a2),
];

/// Every (location, day, block) of 200 days at both locations, with `food` as their sales.
fn rows(food: i64) -> Vec<SalesRow> {
    let first = Date::from_calendar_date(2026, Month::January, 1).unwrap();
    let mut rows = Vec::new();
    for location in LOCATIONS {
        for day in 0..200 {
            for block in [Block::Lunch, Block::Dinner, Block::LateNight] {
                rows.push(SalesRow {
                    location_id: LocationId(location),
                    date: first + time::Duration::days(day),
                    block,
                    food: Decimal::from(food),
                    beverage: Decimal::ONE,
                    other: Decimal::ZERO,
                    guests: Some(3),
                });
            }
        }
    }
    rows
}

/// A team of the two locations, and the store on a pool of its own.
async fn seeded() -> (TestDatabase, AsyncPgConnection, PgAnalyticsStore) {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1');
         INSERT INTO locations (id, team_id, name, slug, timezone)
           VALUES ('{}', 'org_1', 'A', 'a', 'UTC'), ('{}', 'org_1', 'B', 'b', 'UTC');",
        LOCATIONS[0], LOCATIONS[1]
    ))
    .await
    .unwrap();
    let store = PgAnalyticsStore::new(pool(database.url(), 8));
    (database, conn, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_uploads_of_the_same_rows_in_opposite_orders_both_land() {
    let (_database, mut conn, store) = seeded().await;
    let team = TeamId::new("org_1");

    // A till resending its day while the back office uploads the same days newest first: each
    // upsert locks the rows it writes, in the order it writes them.
    for round in 1..=4 {
        let forward = rows(round);
        let mut backward = forward.clone();
        backward.reverse();
        let (a, b) = futures::join!(store.ingest_sales(&team, &forward), store.ingest_sales(&team, &backward));
        assert_eq!((a.unwrap(), b.unwrap()), (1_200, 1_200), "round {round}");
    }

    #[derive(diesel::QueryableByName)]
    struct Totals {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        facts: i64,
        #[diesel(sql_type = diesel::sql_types::Numeric)]
        food: Decimal,
        #[diesel(sql_type = diesel::sql_types::Numeric)]
        kept_food: Decimal,
    }
    let totals: Totals = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT (SELECT count(*) FROM sales_facts) AS facts, (SELECT sum(food) FROM sales_facts) AS food,
                    (SELECT sum(food) FROM team_daily_sales) AS kept_food",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    assert_eq!((totals.facts, totals.food, totals.kept_food), (1_200, Decimal::from(4_800), Decimal::from(4_800)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_settings_of_the_week_goals_in_opposite_orders_both_land() {
    let (_database, _conn, store) = seeded().await;
    let team = TeamId::new("org_1");
    for round in 1..=4 {
        let forward: Vec<DayGoal> = (0..7)
            .map(|day| DayGoal {
                day_of_week: day,
                sales_goal: Decimal::from(1_000 * round),
                labor_pct_target: Decimal::from(25),
                splh_target: Decimal::from(50),
            })
            .collect();
        let mut backward = forward.clone();
        backward.reverse();
        for location in [None, Some(LocationId(LOCATIONS[0]))] {
            let (a, b) =
                futures::join!(store.set_goals(&team, location, &forward), store.set_goals(&team, location, &backward));
            assert_eq!((a.unwrap(), b.unwrap()), (Some(()), Some(())), "round {round}, {location:?}");
        }
    }
    let stored = store.goals(&team, Some(LocationId(LOCATIONS[0]))).await.unwrap().unwrap();
    assert_eq!(stored.len(), 14, "seven team defaults and seven of the location: {stored:?}");
    assert!(stored.iter().all(|goal| goal.sales_goal == Decimal::from(4_000)), "{stored:?}");
}
