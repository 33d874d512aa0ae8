//! Processes, databases and clients for the scenarios.

use std::fmt;

pub use opsd_tests::served::{Binary, Opsd, client};
pub use opsd_tests::{API_KEY, CRON_SECRET, TestDatabase};

/// What a scenario injected and observed, and whether the service held.
pub struct Outcome {
    pub injected: String,
    pub observed: String,
    pub held: bool,
}

impl Outcome {
    pub fn new(injected: impl Into<String>, observed: impl Into<String>, held: bool) -> Self {
        Self { injected: injected.into(), observed: observed.into(), held }
    }

    pub fn not_held(injected: impl Into<String>, observed: impl Into<String>) -> Self {
        Self::new(injected, observed, false)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.held { "held" } else { "NOT HELD" };
        write!(f, "{verdict}: injected {}; observed {}", self.injected, self.observed)
    }
}

/// A fresh, migrated database (cloned from the test template), dropped at the end.
pub async fn database() -> TestDatabase {
    TestDatabase::new().await
}

/// A connection to the database server's maintenance database, for injecting faults.
pub async fn admin(db: &TestDatabase) -> tokio_postgres::Client {
    let url = format!("{}/postgres", db.url().rsplit_once('/').unwrap().0);
    connect(&url).await
}

pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connecting");
    tokio::spawn(connection);
    client
}

/// Terminates every session of the database, the way a failover or a restart of PostgreSQL does.
pub async fn terminate_sessions(admin: &tokio_postgres::Client, name: &str) -> i64 {
    admin
        .query_one("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", &[&name])
        .await
        .unwrap()
        .get(0)
}
