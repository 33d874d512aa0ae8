//! Each HTTP worker's own connection: taken out of the same budget, kept by its thread and reused
//! there, never another thread's; a thread that is not a worker uses the shared pool.

mod support;
use support::pool;

use std::sync::mpsc;

use diesel::QueryableByName;
use diesel::sql_types::Integer;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures::FutureExt;
use opsd_postgres::Db;
use opsd_test_db::TestDatabase;

#[derive(QueryableByName)]
struct Backend {
    #[diesel(sql_type = Integer)]
    pid: i32,
}

async fn backend(conn: &mut AsyncPgConnection) -> i32 {
    diesel::sql_query("SELECT pg_backend_pid() AS pid").get_result::<Backend>(conn).await.unwrap().pid
}

/// Runs a worker as actix-web does (a thread with a current-thread runtime of its own): attaches,
/// takes its connection twice and reports both backends, then holds the connection until `release`.
fn worker(db: Db, backends: mpsc::Sender<(i32, i32)>, release: mpsc::Receiver<()>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            db.attach_worker().unwrap();
            let first = backend(&mut db.worker_conn().await.unwrap()).await;
            let mut conn = db.worker_conn().await.unwrap();
            let second = backend(&mut conn).await;
            assert!(db.worker_conn().now_or_never().is_none(), "a worker has one connection of its own");
            backends.send((first, second)).unwrap();
            release.recv().unwrap();
        });
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn each_worker_keeps_one_connection_of_the_budget_and_the_shared_pool_the_rest() {
    let database = TestDatabase::new().await;
    let mut db = pool(database.url(), 6);
    db.split_for_workers(2);

    let (backends, reported) = mpsc::channel();
    let (release, held) = (0..2).map(|_| mpsc::channel()).unzip::<_, _, Vec<_>, Vec<_>>();
    let workers: Vec<_> = held.into_iter().map(|held| worker(db.clone(), backends.clone(), held)).collect();
    let (one, two) = (reported.recv().unwrap(), reported.recv().unwrap());
    assert_eq!((one.0, two.0), (one.1, two.1), "a worker reuses its own connection");
    assert_ne!(one.0, two.0, "workers do not share a connection");

    let mut shared = Vec::new();
    for _ in 0..4 {
        shared.push(db.conn().await.expect("the shared pool keeps the other four"));
    }
    for conn in &mut shared {
        let pid = backend(conn).await;
        assert!(pid != one.0 && pid != two.0, "a worker's connection is not in the shared pool");
    }
    assert!(db.conn().now_or_never().is_none(), "the budget of six is spent");
    assert!(db.worker_conn().now_or_never().is_none(), "off a worker, the worker connection is a shared one");

    for release in release {
        release.send(()).unwrap();
    }
    for worker in workers {
        worker.join().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_budget_too_small_to_split_stays_one_shared_pool() {
    let database = TestDatabase::new().await;
    let mut db = pool(database.url(), 3);
    db.split_for_workers(2);
    db.attach_worker().unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(db.conn().await.expect("all three are shared"));
    }
    assert!(db.worker_conn().now_or_never().is_none(), "no connection was kept for a worker");
}
