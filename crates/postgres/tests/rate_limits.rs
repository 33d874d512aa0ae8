//! The sliding-window rate limit against a real database.

mod support;
use support::pool;

use std::sync::Arc;

use opsd_core::{RateLimiter, RatePolicy};
use opsd_postgres::PgRateLimiter;
use opsd_test_db::TestDatabase;
use time::OffsetDateTime;

const TEN: RatePolicy = RatePolicy { name: "test", per_minute: 10 };
const TWENTY: RatePolicy = RatePolicy { name: "test", per_minute: 20 };

fn limiter(url: &str) -> PgRateLimiter {
    PgRateLimiter::new(pool(url, 8))
}

#[tokio::test(flavor = "multi_thread")]
async fn at_most_the_limit_in_any_minute_even_across_a_minute_edge() {
    let database = TestDatabase::new().await;
    let limiter = limiter(database.url());
    let edge = OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap(); // 00:00:00 of a minute
    let at = |seconds: f64| edge + time::Duration::seconds_f64(seconds);
    // Ten calls in the last two seconds of one minute...
    for i in 0..10 {
        let quota = limiter.hit(TEN, "k", at(-2.0 + f64::from(i) * 0.1)).await.unwrap().unwrap();
        assert_eq!((quota.limit, quota.window_seconds, quota.remaining), (10, 60, 9 - i), "each call takes one");
        assert_eq!(quota.reset_seconds, 60, "the first call leaves the window within the minute");
    }
    // ...leave no room in the first seconds of the next (a fixed window would admit ten more).
    let refused = limiter.hit(TEN, "k", at(1.0)).await.unwrap().unwrap_err();
    assert_eq!(refused.retry_after_seconds, 57, "until the oldest call is a minute old");
    assert_eq!((refused.quota.remaining, refused.quota.policy), (0, "test"));
    assert!(limiter.hit(TEN, "k", at(57.9)).await.unwrap().is_err());
    let quota = limiter.hit(TEN, "k", at(58.05)).await.unwrap().expect("the oldest left the window");
    assert_eq!(quota.remaining, 0, "its place is taken at once");
    let other = limiter.hit(TEN, "other", at(1.0)).await.unwrap().expect("keys are counted apart");
    assert_eq!((other.remaining, other.reset_seconds), (9, 60));
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_callers_on_several_connections_share_the_limit() {
    let database = TestDatabase::new().await;
    let limiter = Arc::new(limiter(database.url()));
    let now = OffsetDateTime::now_utc();
    let calls = (0..30).map(|_| {
        let limiter = limiter.clone();
        tokio::spawn(async move { limiter.hit(TEN, "shared", now).await.unwrap().is_ok() })
    });
    let admitted = futures::future::join_all(calls).await.into_iter().filter(|r| *r.as_ref().unwrap()).count();
    assert_eq!(admitted, 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_keeps_one_row_holding_only_the_calls_of_its_last_window() {
    let database = TestDatabase::new().await;
    let limiter = limiter(database.url());
    let start = OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap();
    // Three minutes of a call every two seconds, each refused call included.
    for i in 0..90 {
        limiter.hit(TWENTY, "busy", start + time::Duration::seconds(2 * i)).await.unwrap().ok();
    }
    limiter.hit(TWENTY, "quiet", start + time::Duration::seconds(178)).await.unwrap().unwrap();
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let last_call = start.unix_timestamp() + 178;
    let rows = client
        .query(
            &format!(
                "SELECT key, cardinality(hits) AS kept, \
                        (SELECT min(at) FROM unnest(hits) AS at) > to_timestamp({last_call}) - interval '1 minute' AS recent \
                 FROM rate_limits ORDER BY key"
            ),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get::<_, String>("key"), row.get::<_, i32>("kept"), row.get::<_, bool>("recent")))
        .collect::<Vec<_>>();
    // The busy key keeps its last 20 admitted calls, all within the minute before its last call.
    assert_eq!(rows, [("busy".to_owned(), 20, true), ("quiet".to_owned(), 1, true)]);
}
