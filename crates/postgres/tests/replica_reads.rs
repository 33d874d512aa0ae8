//! `Db::read` with replicas: a replica that cannot answer, or is not known to be fresh, never turns
//! a read into an error; the primary answers it.

use std::time::Duration;

use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;
use opsd_postgres::{Db, DbConfig, PoolMode, Topology, store_error};
use opsd_test_db::TestDatabase;

#[derive(diesel::QueryableByName)]
struct One {
    #[diesel(sql_type = Integer)]
    n: i32,
}

fn db_with_replicas(primary: &str, replicas: Vec<String>) -> Db {
    Db::connect_to(
        &DbConfig {
            url: primary.to_owned().into(),
            max_connections: 4,
            acquire_timeout: Duration::from_millis(500),
            statement_timeout: Duration::from_secs(5),
        },
        &Topology {
            pool_mode: PoolMode::Session,
            session_url: None,
            replica_urls: replicas.into_iter().map(Into::into).collect(),
            replica_max_lag: Duration::from_secs(5),
        },
    )
    .unwrap()
}

async fn read_one(db: &Db) -> i32 {
    db.read(async |conn| diesel::sql_query("SELECT 1 AS n").get_result::<One>(conn).await.map_err(store_error))
        .await
        .unwrap()
        .n
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_that_is_down_or_never_fresh_leaves_the_read_to_the_primary() {
    let database = TestDatabase::new().await;
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = format!("postgres://opsd@127.0.0.1:{closed_port}/opsd?sslmode=disable");
    // A primary named as a replica: it has no replay position, so it is never known to be fresh.
    let db = db_with_replicas(database.url(), vec![down, database.url().to_owned()]);
    let monitor = db.spawn_replica_monitor().expect("replicas are configured");
    tokio::time::sleep(Duration::from_millis(600)).await;

    for _ in 0..3 {
        assert_eq!(read_one(&db).await, 1);
    }
    let stats = db.replica_stats().unwrap();
    assert_eq!(stats.reads, 0, "no replica was fresh: {stats:?}");
    assert_eq!(stats.fallbacks, 3, "{stats:?}");
    assert_eq!(stats.lag, vec![None, None], "neither is known to have replayed anything");
    monitor.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_replicas_reads_go_to_the_primary_and_nothing_is_counted() {
    let database = TestDatabase::new().await;
    let db = db_with_replicas(database.url(), Vec::new());
    assert!(db.spawn_replica_monitor().is_none());
    assert_eq!(read_one(&db).await, 1);
    assert_eq!(db.replica_stats(), None);
}
