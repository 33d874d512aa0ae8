use std::sync::Arc;
use std::time::Duration;

use diesel::ConnectionError;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::{AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use opsd_core::StoreError;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::tls::PgConnect;

pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

#[derive(Debug, Clone)]
pub struct DbConfig {
    /// Carries the password: never printed.
    pub url: SecretString,
    pub max_connections: usize,
    /// How long a request waits for a free connection before it is answered 503.
    pub acquire_timeout: Duration,
    pub statement_timeout: Duration,
}

/// How long a bulk write waits for its turn ([`Db::bulk_conn`]) before it is answered 503.
pub const BULK_WAIT: Duration = Duration::from_secs(30);

/// The connection pool, shared by every adapter.
#[derive(Clone)]
pub struct Db {
    pool: Pool<AsyncPgConnection>,
    /// Turns for bulk writes: a third of the pool, so a burst of uploads leaves the rest to
    /// interactive requests.
    bulk: Arc<Semaphore>,
}

/// A pooled connection held for a bulk write, with its turn.
pub struct BulkConn {
    conn: Object<AsyncPgConnection>,
    _turn: OwnedSemaphorePermit,
}

impl std::ops::Deref for BulkConn {
    type Target = AsyncPgConnection;

    fn deref(&self) -> &AsyncPgConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for BulkConn {
    fn deref_mut(&mut self) -> &mut AsyncPgConnection {
        &mut self.conn
    }
}

impl Db {
    pub fn connect(config: &DbConfig) -> Result<Self, StoreError> {
        let statement_timeout_ms = config.statement_timeout.as_millis();
        let mut manager_config = ManagerConfig::default();
        // No test query on every checkout: a connection that died shows as `Unavailable` on its
        // first use, and the pool drops it.
        manager_config.recycling_method = RecyclingMethod::Fast;
        // Each connection's driver task runs on the runtime that established it. The server's
        // workers each have a runtime of their own, and one that stops first at shutdown would take
        // the connections it made with it while another worker still uses them ("connection
        // closed"); so connections are established on the runtime that built the pool, which
        // lives until the process ends.
        let runtime = tokio::runtime::Handle::try_current().ok();
        let connect = PgConnect::from_url(config.url.expose_secret()).map_err(StoreError::Unknown)?;
        manager_config.custom_setup = Box::new(move |_url| {
            let connect = connect.clone();
            let establish = async move {
                let (client, connection) = connect
                    .config
                    .connect(connect.tls.clone())
                    .await
                    .map_err(|error| ConnectionError::BadConnection(describe(&error)))?;
                let mut conn = AsyncPgConnection::try_from_client_and_connection(client, connection).await?;
                conn.batch_execute(&format!(
                    "SET application_name = 'opsd'; SET statement_timeout = {statement_timeout_ms}; SET TIME ZONE 'UTC'"
                ))
                .await
                .map_err(ConnectionError::CouldntSetupConfiguration)?;
                Ok(conn)
            };
            match &runtime {
                Some(runtime) => {
                    let task = runtime.spawn(establish);
                    Box::pin(async move {
                        task.await.map_err(|error| ConnectionError::BadConnection(format!("connecting: {error}")))?
                    })
                }
                None => Box::pin(establish),
            }
        });
        let manager = AsyncDieselConnectionManager::new_with_config(config.url.expose_secret(), manager_config);
        let pool = Pool::builder(manager)
            .max_size(config.max_connections)
            .wait_timeout(Some(config.acquire_timeout))
            .create_timeout(Some(config.acquire_timeout))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|error| StoreError::Unknown(error.to_string()))?;
        let bulk = Arc::new(Semaphore::new((config.max_connections / 3).max(1)));
        Ok(Self { pool, bulk })
    }

    /// A connection for a write of many rows, which may hold it for seconds: at most a third of the
    /// pool at once. Others wait their turn in order, up to [`BULK_WAIT`], instead of taking every
    /// connection and turning interactive requests away.
    pub async fn bulk_conn(&self) -> Result<BulkConn, StoreError> {
        let turn = tokio::time::timeout(BULK_WAIT, self.bulk.clone().acquire_owned())
            .await
            .map_err(|_| StoreError::Unavailable("no turn for a bulk write within 30 s".into()))?
            .map_err(|_| StoreError::Unavailable("the pool is closed".into()))?;
        Ok(BulkConn { conn: self.conn().await?, _turn: turn })
    }

    pub async fn conn(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(|error| match error {
            PoolError::Timeout(_) | PoolError::Backend(_) | PoolError::Closed => {
                StoreError::Unavailable(error.to_string())
            }
            _ => StoreError::Unknown(error.to_string()),
        })
    }

    /// `SELECT 1`: the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.batch_execute("SELECT 1").await.map_err(crate::store_error)
    }
}

/// Runs the embedded migrations that have not run yet, under a PostgreSQL advisory lock: instances
/// that start together wait for each other, and each migration is applied once. Needs Tokio's
/// multi-thread runtime.
pub async fn run_migrations(db: &Db) -> Result<(), StoreError> {
    // The lock lives on a session of its own, closed afterwards (a dead instance's lock goes with
    // its session); waiting for another instance's migrations is not bound by statement_timeout.
    let mut lock = Object::take(db.conn().await?);
    lock.batch_execute("SET statement_timeout = 0; SELECT pg_advisory_lock(hashtextextended('opsd-migrations', 0))")
        .await
        .map_err(crate::store_error)?;
    let conn = db.conn().await?;
    let mut harness = AsyncMigrationHarness::new(conn);
    let applied = tokio::task::block_in_place(|| harness.run_pending_migrations(MIGRATIONS).map(|done| done.len()))
        .map_err(|error| StoreError::Unknown(format!("migrations failed: {error}")));
    let _ = lock.batch_execute("SELECT pg_advisory_unlock(hashtextextended('opsd-migrations', 0))").await;
    if let Ok(applied) = applied
        && applied > 0
    {
        tracing::info!(applied, "migrations applied");
    }
    applied.map(|_| ())
}

/// The driver's error with its cause (a refused certificate says why), without the URL.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}
