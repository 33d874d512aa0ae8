use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use diesel::ConnectionError;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::{AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use opsd_core::StoreError;
use secrecy::{ExposeSecret, SecretString};
use tokio::runtime::Handle;
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

/// The connection pool, shared by every adapter; and, once [`Db::split_for_workers`] and
/// [`Db::attach_worker`] ran, one connection per HTTP worker thread for [`Db::worker_conn`], all
/// within `max_connections`.
#[derive(Clone)]
pub struct Db {
    id: u64,
    pool: Pool<AsyncPgConnection>,
    setup: Arc<Setup>,
    /// Whether the budget keeps a connection for each worker ([`Db::split_for_workers`]).
    split: bool,
    /// Turns for bulk writes: a third of the budget, so a burst of uploads leaves the rest to
    /// interactive requests.
    bulk: Arc<Semaphore>,
}

/// What making a pool needs.
struct Setup {
    /// Where the shared connections' driver tasks run (see [`Db::connect`]).
    runtime: Option<Handle>,
    connect: PgConnect,
    url: String,
    acquire_timeout: Duration,
    statement_timeout_ms: u128,
}

static NEXT_DB: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The worker connection of the HTTP worker running on this thread, by [`Db`] (a test process
    /// holds many), as a pool of one. It goes with the thread: its driver runs on the worker's own
    /// runtime, which stops with it.
    static WORKER_POOLS: RefCell<HashMap<u64, Pool<AsyncPgConnection>>> = RefCell::new(HashMap::new());
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
        let setup = Arc::new(Setup {
            runtime: tokio::runtime::Handle::try_current().ok(),
            connect: PgConnect::from_url(config.url.expose_secret()).map_err(StoreError::Unknown)?,
            url: config.url.expose_secret().to_owned(),
            acquire_timeout: config.acquire_timeout,
            statement_timeout_ms: config.statement_timeout.as_millis(),
        });
        // A connection's driver task runs on the runtime that established it. The server's workers
        // each have a runtime of their own, and one that stops first at shutdown would take the
        // shared connections it made with it while another worker still uses them ("connection
        // closed"); so they are established on the runtime that built the pool, which lives until
        // the process ends.
        let pool = setup.pool(config.max_connections, setup.runtime.clone())?;
        let bulk = Arc::new(Semaphore::new((config.max_connections / 3).max(1)));
        Ok(Self { id: NEXT_DB.fetch_add(1, Ordering::Relaxed), pool, setup, split: false, bulk })
    }

    /// Keeps one connection of the budget for each of `workers` HTTP worker threads (see
    /// [`Db::attach_worker`]); the shared pool keeps the rest, at least two. Call it before cloning
    /// the `Db` into the adapters.
    pub fn split_for_workers(&mut self, workers: usize) {
        let max = self.pool.status().max_size;
        if workers == 0 || max < workers + 2 {
            return;
        }
        self.split = true;
        self.pool.resize(max - workers);
    }

    /// Keeps one connection of the budget as a session of its own, for state that lives as long as
    /// its session (the jobs' advisory locks, [`crate::PgJobLocks`]); the shared pool keeps the rest,
    /// and with a budget of two or less it is one connection beyond it. Call it before cloning the
    /// `Db` into the adapters.
    pub fn split_session(&mut self) -> Result<Pool<AsyncPgConnection>, StoreError> {
        let max = self.pool.status().max_size;
        if max > 2 {
            self.pool.resize(max - 1);
        }
        self.setup.pool(1, self.setup.runtime.clone())
    }

    /// Makes the calling thread's worker connection for this `Db` (opened on first use), which its
    /// own runtime drives. Called by each HTTP worker as it starts; does nothing unless
    /// [`Db::split_for_workers`] kept connections for the workers.
    pub fn attach_worker(&self) -> Result<(), StoreError> {
        if !self.split {
            return Ok(());
        }
        let pool = self.setup.pool(1, None)?;
        WORKER_POOLS.with(|pools| pools.borrow_mut().insert(self.id, pool));
        Ok(())
    }

    /// For a hot read of a few short statements: the calling worker's own connection, else (on any
    /// other thread) one from the shared pool. Requests on one worker take turns on it.
    ///
    /// Why: a connection's driver task runs on one runtime. A request that uses a connection driven
    /// by another thread hands every message over to it and waits to be woken back, two thread
    /// wake-ups per round trip; on 2 cores the team-wide report ran 25-40% faster on the worker's
    /// own connection. Only short reads use it: one slow statement would hold up every request of
    /// that worker behind it. (More than one connection per worker stalled some queries for
    /// 0.1-2 s in that measurement, on our side of the socket; the cause was not found.)
    pub async fn worker_conn(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        match WORKER_POOLS.with(|pools| pools.borrow().get(&self.id).cloned()) {
            Some(own) => own.get().await.map_err(pool_error),
            None => self.conn().await,
        }
    }

    /// A connection for a write of many rows, which may hold it for seconds: at most a third of the
    /// budget at once. Others wait their turn in order, up to [`BULK_WAIT`], instead of taking every
    /// connection and turning interactive requests away.
    pub async fn bulk_conn(&self) -> Result<BulkConn, StoreError> {
        let turn = tokio::time::timeout(BULK_WAIT, self.bulk.clone().acquire_owned())
            .await
            .map_err(|_| StoreError::Unavailable("no turn for a bulk write within 30 s".into()))?
            .map_err(|_| StoreError::Unavailable("the pool is closed".into()))?;
        Ok(BulkConn { conn: self.conn().await?, _turn: turn })
    }

    pub async fn conn(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// `SELECT 1`: the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.batch_execute("SELECT 1").await.map_err(crate::store_error)
    }
}

impl Setup {
    /// A pool of `size` connections. `runtime`: where their driver tasks run; `None`, the runtime
    /// that makes each connection.
    fn pool(&self, size: usize, runtime: Option<Handle>) -> Result<Pool<AsyncPgConnection>, StoreError> {
        let mut manager_config = ManagerConfig::default();
        // No test query on every checkout: a connection that died shows as `Unavailable` on its
        // first use, and the pool drops it.
        manager_config.recycling_method = RecyclingMethod::Fast;
        let (connect, statement_timeout_ms) = (self.connect.clone(), self.statement_timeout_ms);
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
        let manager = AsyncDieselConnectionManager::new_with_config(&self.url, manager_config);
        Pool::builder(manager)
            .max_size(size)
            .wait_timeout(Some(self.acquire_timeout))
            .create_timeout(Some(self.acquire_timeout))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|error| StoreError::Unknown(error.to_string()))
    }
}

pub(crate) fn pool_error(error: PoolError) -> StoreError {
    match error {
        PoolError::Timeout(_) | PoolError::Backend(_) | PoolError::Closed => StoreError::Unavailable(error.to_string()),
        _ => StoreError::Unknown(error.to_string()),
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
