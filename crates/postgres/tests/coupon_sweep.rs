//! The expiry sweep against a real database: racing sweeps, locked rows, the reconciliation.

mod support;
use support::pool;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::{Clock, SystemClock};
use opsd_coupons::{ExpiryCall, ExpiryStore, ExpirySweep, SweepKey, SweepReport};
use opsd_postgres::PgExpiryStore;
use opsd_test_db::{CountQueries, TestDatabase};
use time::OffsetDateTime;
use uuid::Uuid;

const OFFER: &str = "00000000-0000-7000-8000-0000000000f1";

/// A call of up to `max_batches` batches of 100 reservations due at `now`, after `after` and up to `until`.
fn due(now: OffsetDateTime, max_batches: u32, after: Option<SweepKey>, until: Option<SweepKey>) -> ExpiryCall {
    ExpiryCall { now, limit: 100, max_batches, after, until }
}

/// An offer holding `due` active reservations that expired a minute ago, and `later` that have not.
async fn seed(conn: &mut AsyncPgConnection, due: u32, later: u32) {
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1');
         INSERT INTO locations (id, team_id, name, slug, timezone) VALUES ('00000000-0000-7000-8000-0000000000a1', 'org_1', 'A', 'a', 'UTC');
         INSERT INTO coupon_offers (id, team_id, location_id, name, capacity, held, created_at)
           VALUES ('{OFFER}', 'org_1', '00000000-0000-7000-8000-0000000000a1', 'Free fries', {total}, {total}, now());
         INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
           SELECT gen_random_uuid(), '{OFFER}', 'guest-' || n, 'active', now() - interval '1 minute', now() FROM generate_series(1, {due}) n;
         INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
           SELECT gen_random_uuid(), '{OFFER}', 'later-' || n, 'active', now() + interval '1 hour', now() FROM generate_series(1, {later}) n;",
        total = due + later
    ))
    .await
    .unwrap();
}

async fn count(conn: &mut AsyncPgConnection, sql: &str) -> i64 {
    use diesel::QueryableByName;
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    diesel::sql_query(sql).get_result::<Count>(conn).await.unwrap().n
}

/// Two instances (two pools, no job lock between them) sweeping at the same time.
async fn two_instances_sweep(url: &str) -> (SweepReport, SweepReport) {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let first = ExpirySweep::new(Arc::new(PgExpiryStore::new(pool(url, 4))), clock.clone());
    let second = ExpirySweep::new(Arc::new(PgExpiryStore::new(pool(url, 4))), clock);
    let (a, b) = futures::join!(first.run(Uuid::now_v7()), second.run(Uuid::now_v7()));
    (a.unwrap(), b.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sweeps_racing_expire_each_reservation_exactly_once() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 1_000, 50).await;
    let (a, b) = two_instances_sweep(database.url()).await;
    assert_eq!(a.expired + b.expired, 1_000, "{a:?} {b:?}");
    assert_eq!(a.accepted_events + b.accepted_events, 1_000);
    assert_eq!((a.duplicate_events, b.duplicate_events), (0, 0));
    assert_eq!(b.reconciliation_delta, 0);
    assert!(a.healthy() && b.healthy());
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM coupon_reservations WHERE state = 'expired'").await, 1_000);
    assert_eq!(count(&mut conn, "SELECT held::bigint AS n FROM coupon_offers").await, 50);
    assert_eq!(count(&mut conn, "SELECT count(DISTINCT reservation_id) AS n FROM coupon_expiry_events").await, 1_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reservation_locked_by_a_redeem_is_ignored_not_expired() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 3, 0).await;
    // A redeem in flight: it holds the row lock of one due reservation.
    let (redeemer, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    redeemer.batch_execute("BEGIN").await.unwrap();
    let locked: String = redeemer
        .query_one("SELECT id::text FROM coupon_reservations ORDER BY guest_id LIMIT 1 FOR UPDATE", &[])
        .await
        .unwrap()
        .get(0);

    let store = PgExpiryStore::new(pool(database.url(), 4));
    let batch = store.expire_batches(due(SystemClock.now(), 1, None, None)).await.unwrap();
    assert_eq!((batch.candidates, batch.expired), (3, 2), "the locked one is skipped, so it counts as ignored");

    redeemer
        .execute(
            "UPDATE coupon_reservations SET state = 'redeemed', redeemed_at = now() WHERE id = $1::text::uuid",
            &[&locked],
        )
        .await
        .unwrap();
    redeemer.batch_execute("UPDATE coupon_offers SET held = held - 1; COMMIT").await.unwrap();
    let again = store.expire_batches(due(SystemClock.now(), 1, None, None)).await.unwrap();
    assert_eq!((again.candidates, again.expired), (0, 0), "the redeemed one is not expired later");
    let health = store.health(SystemClock.now()).await.unwrap();
    assert_eq!(health.reconciliation_delta, 0);
    assert_eq!(count(&mut conn, "SELECT held::bigint AS n FROM coupon_offers").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_health_reads_the_delta_and_the_oldest_lag() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 2, 1).await;
    let store = PgExpiryStore::new(pool(database.url(), 4));
    let health = store.health(SystemClock.now()).await.unwrap();
    assert_eq!(health.reconciliation_delta, 0);
    assert!(health.oldest_due_lag_seconds.unwrap() >= 59.0, "{health:?}");
    conn.batch_execute("UPDATE coupon_offers SET held = held - 1").await.unwrap();
    assert_eq!(store.health(SystemClock.now()).await.unwrap().reconciliation_delta, -1);
}

#[tokio::test(flavor = "multi_thread")]
async fn split_ranges_meet_without_overlap_or_gap() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    let store = PgExpiryStore::new(pool(database.url(), 4));
    seed(&mut conn, 999, 5).await;
    assert_eq!(store.split_due(SystemClock.now(), 2).await.unwrap(), vec![], "too few to split");
    seed_more(&mut conn, 1_001).await;
    let now = SystemClock.now();
    let bounds = store.split_due(now, 2).await.unwrap();
    assert_eq!(bounds.len(), 1, "{bounds:?}");
    let split = bounds[0];

    // The lower range stops at the split key, inclusive; the upper one continues after it.
    let lower = store.expire_batches(due(now, 1_000, None, Some(split))).await.unwrap();
    let upper = store.expire_batches(due(now, 1_000, Some(split), None)).await.unwrap();
    assert_eq!((lower.expired, upper.expired), (1_000, 1_000));
    assert_eq!((lower.batches, upper.batches), (11, 11), "ten full batches and an empty one each");
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM coupon_reservations WHERE state = 'active'").await, 5);
    assert_eq!(store.health(SystemClock.now()).await.unwrap().reconciliation_delta, 0);
}

/// `due` more reservations of the seeded offer, due a minute ago.
async fn seed_more(conn: &mut AsyncPgConnection, due: u32) {
    conn.batch_execute(&format!(
        "UPDATE coupon_offers SET capacity = capacity + {due}, held = held + {due};
         INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
           SELECT gen_random_uuid(), '{OFFER}', 'more-' || n, 'active', now() - interval '1 minute', now() FROM generate_series(1, {due}) n;"
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn one_statement_runs_many_batches_each_its_own_transaction() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 2_050, 10).await;
    let queries = Arc::new(AtomicUsize::new(0));
    let mut sweeper = AsyncPgConnection::establish(database.url()).await.unwrap();
    sweeper.set_instrumentation(CountQueries(queries.clone()));
    let now = SystemClock.now();

    let first = PgExpiryStore::expire_batches_on(&mut sweeper, due(now, 15, None, None)).await.unwrap();
    assert_eq!(queries.load(Ordering::SeqCst), 1, "fifteen batches, one statement");
    assert_eq!((first.batches, first.candidates, first.expired, first.accepted_events), (15, 1_500, 1_500, 1_500));
    assert!(first.all_full(100));
    let rest = PgExpiryStore::expire_batches_on(&mut sweeper, due(now, 15, first.last, None)).await.unwrap();
    assert_eq!(queries.load(Ordering::SeqCst), 2);
    assert_eq!((rest.batches, rest.expired), (6, 550), "it stops after the first batch that is not full");
    assert!(!rest.all_full(100));

    // Each batch committed alone: 21 writing transactions, none with more than 100 reservations.
    let transactions = count(
        &mut conn,
        "SELECT count(*) AS n FROM (SELECT xmin::text, count(*) FROM coupon_reservations WHERE state = 'expired' \
           GROUP BY 1 HAVING count(*) <= 100) t",
    )
    .await;
    assert_eq!(transactions, 21);
    assert_eq!(count(&mut conn, "SELECT held::bigint AS n FROM coupon_offers").await, 10);
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM coupon_expiry_events").await, 2_050);
}

/// `offers` more offers of the seeded location, and `due` reservations due a minute ago spread over
/// them in turn.
async fn seed_offers(conn: &mut AsyncPgConnection, offers: u32, due: u32) {
    conn.batch_execute(&format!(
        "INSERT INTO coupon_offers (id, team_id, location_id, name, capacity, held, created_at)
           SELECT ('00000000-0000-7000-8000-' || lpad(o::text, 12, '0'))::uuid, 'org_1',
                  '00000000-0000-7000-8000-0000000000a1', 'Offer ' || o, {due}, 0, now()
           FROM generate_series(1, {offers}) o;
         INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
           SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad((n % {offers} + 1)::text, 12, '0'))::uuid,
                  'spread-' || n, 'active', now() - interval '1 minute', now()
           FROM generate_series(1, {due}) n;
         UPDATE coupon_offers o SET held = (SELECT count(*) FROM coupon_reservations r WHERE r.offer_id = o.id AND r.state = 'active');"
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_releases_each_offer_by_its_own_count_in_the_same_transaction() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 10, 4).await;
    seed_offers(&mut conn, 3, 60).await;
    let store = PgExpiryStore::new(pool(database.url(), 4));

    let batch = store.expire_batches(due(SystemClock.now(), 1, None, None)).await.unwrap();
    assert_eq!((batch.batches, batch.expired, batch.accepted_events), (1, 70, 70));
    let held =
        count(&mut conn, &format!("SELECT sum(held)::bigint AS n FROM coupon_offers WHERE id <> '{OFFER}'")).await;
    assert_eq!(held, 0, "each of the three offers released its 20");
    let seeded_offer =
        count(&mut conn, &format!("SELECT held::bigint AS n FROM coupon_offers WHERE id = '{OFFER}'")).await;
    assert_eq!(seeded_offer, 4, "the seeded offer keeps its 4 not yet due");
    // The four offers' releases committed with the 70 expiries, as one transaction.
    let transactions = count(
        &mut conn,
        "SELECT count(DISTINCT x)::bigint AS n FROM (
           SELECT xmin::text AS x FROM coupon_reservations WHERE state = 'expired'
           UNION ALL SELECT xmin::text FROM coupon_offers) t",
    )
    .await;
    assert_eq!(transactions, 1);
    assert_eq!(store.health(SystemClock.now()).await.unwrap().reconciliation_delta, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_sweeps_over_many_offers_release_each_reservation_once() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    seed(&mut conn, 0, 0).await;
    seed_offers(&mut conn, 12, 3_000).await;
    // Each instance sweeps two ranges side by side: four sessions releasing the same offers, every
    // batch several of them.
    let (a, b) = two_instances_sweep(database.url()).await;
    assert_eq!(a.expired + b.expired, 3_000, "{a:?} {b:?}");
    assert_eq!(a.accepted_events + b.accepted_events, 3_000);
    assert_eq!(count(&mut conn, "SELECT sum(held)::bigint AS n FROM coupon_offers").await, 0);
    assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM coupon_offers WHERE held <> 0").await, 0);
    let store = PgExpiryStore::new(pool(database.url(), 4));
    assert_eq!(store.health(SystemClock.now()).await.unwrap().reconciliation_delta, 0);
}
