//! Guest-event leases: on the database's clock, and only the current claim may finish an event.

mod support;
use support::pool;

use std::time::Duration as StdDuration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_coupons::GuestEventStore;
use opsd_postgres::PgGuestEventStore;
use opsd_test_db::TestDatabase;
use time::Duration;

async fn seeded() -> (TestDatabase, PgGuestEventStore) {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(
        "INSERT INTO teams (id) VALUES ('org_1');
         INSERT INTO locations (id, team_id, name, slug, timezone) VALUES ('00000000-0000-7000-8000-0000000000a1', 'org_1', 'A', 'a', 'UTC');
         INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, payload, available_at, received_at)
           VALUES (gen_random_uuid(), 'evt_1', 'canonical', 'feedback.submitted', 'sha', 'org_1',
                   '00000000-0000-7000-8000-0000000000a1', '{}', now(), now());",
    )
    .await
    .unwrap();
    let db = pool(database.url(), 2);
    (database, PgGuestEventStore::new(db))
}

async fn state(conn: &mut AsyncPgConnection) -> (String, i32) {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        state: String,
        #[diesel(sql_type = diesel::sql_types::Int4)]
        attempts: i32,
    }
    let row: Row = diesel::sql_query("SELECT state, attempts FROM guest_events").get_result(conn).await.unwrap();
    (row.state, row.attempts)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_whose_lease_ran_out_cannot_finish_the_event_another_worker_took() {
    let (database, store) = seeded().await;
    // Worker A claims for a lease that ends at once (it is paused, say); worker B takes it over.
    let a = store.claim(10, Duration::ZERO).await.unwrap();
    assert_eq!(a.len(), 1);
    tokio::time::sleep(StdDuration::from_millis(20)).await;
    let b = store.claim(10, Duration::minutes(1)).await.unwrap();
    assert_eq!(b.len(), 1, "an expired lease is claimed again");
    assert_ne!(a[0].lease, b[0].lease, "each claim has its own token");
    assert!(store.claim(10, Duration::minutes(1)).await.unwrap().is_empty(), "B's lease holds");

    // A wakes up: neither its completion nor its retry changes anything.
    assert!(!store.complete(a[0].id, a[0].lease, "alerted").await.unwrap());
    assert!(!store.retry_later(a[0].id, a[0].lease, Duration::ZERO, false, "store_unavailable").await.unwrap());
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    assert_eq!(state(&mut conn).await, ("processing".to_owned(), 0), "still B's");

    // B finishes it; once done, nobody's token finishes it again.
    assert!(store.complete(b[0].id, b[0].lease, "alerted").await.unwrap());
    assert_eq!(state(&mut conn).await, ("done".to_owned(), 0));
    assert!(!store.complete(b[0].id, b[0].lease, "alerted").await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_waits_its_backoff_on_the_database_clock() {
    let (_database, store) = seeded().await;
    let claimed = store.claim(10, Duration::minutes(1)).await.unwrap();
    assert!(
        store
            .retry_later(claimed[0].id, claimed[0].lease, Duration::hours(1), false, "store_unavailable")
            .await
            .unwrap()
    );
    assert!(store.claim(10, Duration::minutes(1)).await.unwrap().is_empty(), "not before its backoff");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claimed_alert_is_never_claimed_again_unless_it_is_given_back() {
    let (database, store) = seeded().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(
        "INSERT INTO guest_feedback (id, team_id, location_id, guest_id, rating, submitted_at)
           VALUES ('fb_1', 'org_1', '00000000-0000-7000-8000-0000000000a1', 'g', 1, now());",
    )
    .await
    .unwrap();
    let now = time::OffsetDateTime::now_utc();
    let first = store.record_alert("fb_1", 2, now).await.unwrap().expect("created and claimed");
    // The same feedback delivered again while the first worker sends, or after it went quiet
    // (paused, cut off, dead): it may still send, so nothing is sent again.
    assert_eq!(store.record_alert("fb_1", 2, now).await.unwrap(), None);
    tokio::time::sleep(StdDuration::from_millis(50)).await;
    assert_eq!(store.record_alert("fb_1", 2, now).await.unwrap(), None);
    // Its push went nowhere and it was given back: the next delivery sends it (the same alert).
    store.release_alert(first.id).await.unwrap();
    let again = store.record_alert("fb_1", 2, now).await.unwrap().expect("claimed again");
    assert_eq!(again.id, first.id);
    store.alert_notified(again.id, now).await.unwrap();
    store.release_alert(again.id).await.unwrap();
    assert_eq!(store.record_alert("fb_1", 2, now).await.unwrap(), None, "notified: never again");
}
