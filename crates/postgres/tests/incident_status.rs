//! A status change is one statement: it locks the incident, records what it replaced only when the
//! status differs, and keeps a consistent history under concurrent changes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::{TeamId, UserId};
use opsd_incidents::{IncidentId, Status, StatusUpdate};
use opsd_postgres::PgIncidentStore;
use opsd_test_db::{CountQueries, TestDatabase};
use time::OffsetDateTime;
use uuid::Uuid;

const INCIDENT: &str = "00000000-0000-7000-8000-000000000001";

async fn seeded() -> TestDatabase {
    let database = TestDatabase::new().await;
    let mut admin = AsyncPgConnection::establish(database.url()).await.unwrap();
    admin
        .batch_execute(&format!(
            "INSERT INTO teams (id) VALUES ('org_1');
             INSERT INTO locations (id, team_id, name, slug, timezone)
               VALUES ('00000000-0000-7000-8000-100000000000', 'org_1', 'L', 'l', 'UTC');
             INSERT INTO incidents (id, team_id, location_id, type, severity, status, notes, reported_by, created_at, updated_at)
               VALUES ('{INCIDENT}', 'org_1', '00000000-0000-7000-8000-100000000000', 'Injury', 'high', 'reported',
                       'n', 'user_1', now(), now());"
        ))
        .await
        .unwrap();
    database
}

async fn history(url: &str) -> Vec<(String, String)> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .query("SELECT from_status, to_status FROM incident_status_changes ORDER BY changed_at, id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_is_one_statement_recorded_only_when_the_status_differs() {
    let database = seeded().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    let queries = Arc::new(AtomicUsize::new(0));
    conn.set_instrumentation(CountQueries(queries.clone()));
    let incident = IncidentId(Uuid::parse_str(INCIDENT).unwrap());
    let (team, user) = (TeamId::new("org_1"), UserId::new("user_2"));
    let mut change = async |team: &TeamId, status: Status| {
        queries.store(0, Ordering::SeqCst);
        let update = StatusUpdate { status, by: user.clone(), at: OffsetDateTime::now_utc() };
        let changed = PgIncidentStore::change_status_on(&mut conn, team, incident, &update).await.unwrap();
        assert_eq!(queries.load(Ordering::SeqCst), 1, "one statement");
        changed
    };

    let changed = change(&team, Status::Investigating).await.expect("the team's incident");
    assert_eq!((changed.status, changed.notes.as_str()), (Status::Investigating, "n"));
    let same = change(&team, Status::Investigating).await.expect("unchanged, but found");
    assert_eq!(same.status, Status::Investigating);
    assert_eq!(same.updated_at, changed.updated_at, "an unchanged status does not touch the incident");
    assert!(change(&TeamId::new("org_2"), Status::Resolved).await.is_none(), "another team's incident");
    change(&team, Status::Resolved).await.unwrap();
    assert_eq!(
        history(database.url()).await,
        [("reported".into(), "investigating".into()), ("investigating".into(), "resolved".into())]
    );

    // Parsed and planned once per connection: the four changes share one prepared statement.
    #[derive(diesel::QueryableByName)]
    struct Kept {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        kept: i64,
    }
    let kept: Kept = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query("SELECT count(*) AS kept FROM pg_prepared_statements WHERE statement LIKE '%INSERT INTO incident_status_changes%' AND statement NOT LIKE '%pg_prepared_statements%'"),
        &mut conn,
    )
    .await
    .unwrap();
    assert_eq!(kept.kept, 1, "the status change is kept prepared on the connection");
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_changes_each_record_the_status_they_replaced() {
    let database = seeded().await;
    let incident = IncidentId(Uuid::parse_str(INCIDENT).unwrap());
    let changes = (0..8).map(|n| {
        let url = database.url().to_owned();
        tokio::spawn(async move {
            let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
            let status = [Status::Investigating, Status::Resolved][n % 2];
            for _ in 0..10 {
                let update = StatusUpdate { status, by: UserId::new("u"), at: OffsetDateTime::now_utc() };
                PgIncidentStore::change_status_on(&mut conn, &TeamId::new("org_1"), incident, &update)
                    .await
                    .unwrap()
                    .unwrap();
            }
        })
    });
    for change in futures::future::join_all(changes).await {
        change.unwrap();
    }
    // The changes chain from `reported` to the incident's final status when each one records the
    // status it really replaced: every status is left as often as it is entered, but for the
    // first (left once more) and the last (entered once more).
    let history = history(database.url()).await;
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let last: String = client.query_one("SELECT status FROM incidents", &[]).await.unwrap().get(0);
    let mut balance = std::collections::HashMap::<&str, i32>::new();
    for (from, to) in &history {
        assert_ne!(from, to, "a change that changed nothing was recorded");
        *balance.entry(from).or_default() += 1;
        *balance.entry(to).or_default() -= 1;
    }
    *balance.entry("reported").or_default() -= 1;
    *balance.entry(&last).or_default() += 1;
    assert!(balance.values().all(|&b| b == 0), "the history does not chain: {history:?}");
    assert!(history.len() >= 2, "concurrent changes alternate the status");
}
