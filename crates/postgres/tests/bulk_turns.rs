//! Bulk writes take turns: at most a third of the pool at once, the rest of it stays free for
//! interactive requests, and a waiting bulk write proceeds when a turn is released.

mod support;
use support::pool;

use diesel_async::SimpleAsyncConnection;
use futures::FutureExt;
use opsd_test_db::TestDatabase;

#[tokio::test(flavor = "multi_thread")]
async fn a_third_of_the_pool_serves_bulk_writes_and_the_rest_stays_free() {
    let database = TestDatabase::new().await;
    let db = pool(database.url(), 6);
    let mut first = db.bulk_conn().await.unwrap();
    let mut second = db.bulk_conn().await.unwrap();
    first.batch_execute("SELECT 1").await.unwrap();
    second.batch_execute("SELECT 1").await.unwrap();
    assert!(db.bulk_conn().now_or_never().is_none(), "a third bulk write did not wait for a turn");

    let mut interactive = Vec::new();
    for _ in 0..4 {
        let mut conn = db.conn().await.expect("the rest of the pool is free");
        conn.batch_execute("SELECT 1").await.unwrap();
        interactive.push(conn);
    }
    drop(interactive);

    let waiting = tokio::spawn({
        let db = db.clone();
        async move { db.bulk_conn().await.map(drop) }
    });
    drop(first);
    waiting.await.unwrap().expect("a released turn goes to the waiting bulk write");
}
