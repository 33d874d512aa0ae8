//! What the adapter tests share: a pool like an instance's, and for the round-trip tests a store on
//! one connection, driven on one thread, so that `opsd_test_db::RoundTrips` counts its statements'
//! round trips exactly.
#![allow(dead_code)] // each test binary uses some of it

use std::time::Duration;

use opsd_postgres::{Db, DbConfig};

/// A pool of `max_connections` to `url`.
pub fn pool(url: &str, max_connections: usize) -> Db {
    Db::connect(&DbConfig {
        url: url.to_owned().into(),
        max_connections,
        acquire_timeout: Duration::from_secs(5),
        statement_timeout: Duration::from_secs(30),
    })
    .unwrap()
}

/// A pool of one connection to `url` (the counting proxy's).
pub fn one_connection(url: &str) -> Db {
    pool(url, 1)
}

/// Runs `body` on a current-thread runtime of its own: a connection's driver cannot send half of a
/// pipeline before the rest is queued.
pub async fn on_one_thread<T: Send + 'static>(body: impl AsyncFnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(move || {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(body())
    })
    .await
    .unwrap()
}
