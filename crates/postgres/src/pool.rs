use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use diesel::ConnectionError;
use diesel::connection::CacheSize;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::StoreError;
use secrecy::{ExposeSecret, SecretString};
use tokio::runtime::Handle;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::replicas::{ReplicaStats, Replicas};
use crate::tls::PgConnect;

#[derive(Debug, Clone)]
pub struct DbConfig {
    /// Carries the password: never printed.
    pub url: SecretString,
    pub max_connections: usize,
    /// How long a request waits for a free connection before it is answered 503.
    pub acquire_timeout: Duration,
    pub statement_timeout: Duration,
}

/// Where the connections go besides the primary's pool (docs/deploying.md).
#[derive(Debug, Clone, Default)]
pub struct Topology {
    /// How `DbConfig::url` pools: `Transaction` behind PgBouncer in transaction mode.
    pub pool_mode: PoolMode,
    /// A session-capable address of the primary for what lives as long as a session (the jobs'
    /// locks, the migrations' lock; `LISTEN` connects there too). `None`: `DbConfig::url`.
    pub session_url: Option<SecretString>,
    /// Read-only replicas (or one balancer address in front of them) for the report reads.
    pub replica_urls: Vec<SecretString>,
    /// A replica further behind the primary than this is not read.
    pub replica_max_lag: Duration,
}

/// `DATABASE_POOL_MODE`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PoolMode {
    /// Each pooled connection is one PostgreSQL session: session `SET`s and prepared statements
    /// are kept.
    #[default]
    Session,
    /// Each transaction (or statement outside one) may run on another backend: no session state,
    /// no named prepared statement; `statement_timeout` comes from the role's settings.
    Transaction,
}

/// How long a bulk write waits for its turn ([`Db::bulk_conn`]) before it is answered 503.
pub const BULK_WAIT: Duration = Duration::from_secs(30);

/// One pool's connections at a moment, for `/metrics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStatus {
    pub name: String,
    pub max: usize,
    /// Connections open, lent out or idle.
    pub open: usize,
    pub idle: usize,
    /// Requests waiting for a connection.
    pub waiting: usize,
}

/// The connection pool, shared by every adapter; and, once [`Db::split_for_workers`] and
/// [`Db::attach_worker`] ran, one connection per HTTP worker thread for [`Db::worker_conn`], all
/// within `max_connections`.
#[derive(Clone)]
pub struct Db {
    id: u64,
    pool: Pool<AsyncPgConnection>,
    setup: Arc<Setup>,
    /// Sessions of the primary that outlive a transaction.
    session: Arc<Setup>,
    /// The report reads' replicas, when there are any (see [`Db::read`]).
    replicas: Option<Arc<Replicas>>,
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
    mode: PoolMode,
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
        Self::connect_to(config, &Topology::default())
    }

    /// As [`Db::connect`], with the connection roles of a pooled or replicated deployment.
    pub fn connect_to(config: &DbConfig, topology: &Topology) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Handle::try_current().ok();
        let setup = Arc::new(Setup::new(&config.url, config, topology.pool_mode, runtime.clone())?);
        let runtime = setup.runtime.clone();
        let session = match &topology.session_url {
            Some(url) => Arc::new(Setup::new(url, config, PoolMode::Session, runtime.clone())?),
            None => setup.clone(),
        };
        let replicas = if topology.replica_urls.is_empty() {
            None
        } else {
            let pools = topology
                .replica_urls
                .iter()
                .map(|url| {
                    Setup::new(url, config, PoolMode::Session, runtime.clone())?
                        .pool(config.max_connections, runtime.clone())
                })
                .collect::<Result<_, _>>()?;
            Some(Arc::new(Replicas::new(pools, topology.replica_max_lag)))
        };
        // A connection's driver task runs on the runtime that established it. The server's workers
        // each have a runtime of their own, and one that stops first at shutdown would take the
        // shared connections it made with it while another worker still uses them ("connection
        // closed"); so they are established on the runtime that built the pool, which lives until
        // the process ends.
        let pool = setup.pool(config.max_connections, setup.runtime.clone())?;
        let bulk = Arc::new(Semaphore::new((config.max_connections / 3).max(1)));
        Ok(Self { id: NEXT_DB.fetch_add(1, Ordering::Relaxed), pool, setup, session, replicas, split: false, bulk })
    }

    /// Keeps one connection of the budget for each of `workers` HTTP worker threads (see
    /// [`Db::attach_worker`]); the shared pool keeps the rest, at least two. Call it before cloning
    /// the `Db` into the adapters. Not in transaction mode: each round trip then crosses the pooler
    /// too, and a worker's requests queued behind its one connection (the uncached team report
    /// through PgBouncer: 3,600 answers a second on the workers' own connections, 6,300 on the
    /// shared pool).
    pub fn split_for_workers(&mut self, workers: usize) {
        let max = self.pool.status().max_size;
        if workers == 0 || max < workers + 2 || self.setup.mode == PoolMode::Transaction {
            return;
        }
        self.split = true;
        self.pool.resize(max - workers);
    }

    /// A pool of `size` sessions of the primary's session address, apart from the budget: for
    /// state that must outlive a transaction (the migrations' lock).
    pub(crate) fn session_pool(&self, size: usize) -> Result<Pool<AsyncPgConnection>, StoreError> {
        self.session.pool(size, None)
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
        self.session.pool(1, self.session.runtime.clone())
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

    /// Whether each replica can be reached, in `DATABASE_REPLICA_URLS` order; empty without any.
    pub async fn check_replicas(&self) -> Vec<Result<(), StoreError>> {
        match &self.replicas {
            Some(replicas) => replicas.check().await,
            None => Vec::new(),
        }
    }

    /// The same pool without replicas: its [`Db::read`]s take the primary. For a reader whose reads
    /// decide writes (the nudging jobs read what they nudge about), where a replica's lag would
    /// decide them on stale facts.
    pub fn primary_only(&self) -> Db {
        Db { replicas: None, ..self.clone() }
    }

    /// A report's read: on a replica that has replayed every write it must see (see
    /// [`crate::replicas`]), else, and when that replica fails it, on the primary (a pooled
    /// connection). Only reads go here: a replica refuses writes.
    pub async fn read<T>(
        &self,
        query: impl AsyncFn(&mut AsyncPgConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read_via(Primary::Shared, query).await
    }

    /// As [`Db::read`] for a hot read of a few short statements: on the primary, it takes the
    /// worker's own connection ([`Db::worker_conn`]).
    pub async fn read_short<T>(
        &self,
        query: impl AsyncFn(&mut AsyncPgConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read_via(Primary::Worker, query).await
    }

    async fn read_via<T>(
        &self,
        primary: Primary,
        query: impl AsyncFn(&mut AsyncPgConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if let Some(replicas) = &self.replicas {
            match replicas.pick() {
                None => drop(replicas.fallbacks.fetch_add(1, Ordering::Relaxed)),
                Some(replica) => {
                    let answer = match replica.pool.get().await {
                        Ok(mut conn) => query(&mut conn).await,
                        Err(error) => Err(pool_error(error)),
                    };
                    match answer {
                        Err(error) if crate::replicas::primary_may_answer(&error) => {
                            tracing::warn!(%error, "a replica failed a read; the primary answers it");
                            replicas.fallbacks.fetch_add(1, Ordering::Relaxed);
                        }
                        answer => {
                            replicas.reads.fetch_add(1, Ordering::Relaxed);
                            return answer;
                        }
                    }
                }
            }
        }
        let mut conn = match primary {
            Primary::Shared => self.conn().await?,
            Primary::Worker => self.worker_conn().await?,
        };
        query(&mut conn).await
    }

    /// A team's cache was invalidated here (a write of this instance, or another's `NOTIFY`): no
    /// replica is read until it is known to have replayed past this instant.
    pub fn note_invalidation(&self) {
        if let Some(replicas) = &self.replicas {
            replicas.note_invalidation();
        }
    }

    /// Starts sampling the primary's and the replicas' WAL positions; `None` without replicas.
    pub fn spawn_replica_monitor(&self) -> Option<tokio::task::JoinHandle<()>> {
        let replicas = self.replicas.clone()?;
        Some(tokio::spawn(crate::replicas::monitor(replicas, self.pool.clone())))
    }

    /// The replicas' reads, fallbacks and lag; `None` without replicas.
    pub fn replica_stats(&self) -> Option<ReplicaStats> {
        self.replicas.as_ref().map(|replicas| replicas.stats())
    }

    /// Each pool's connections: the primary's (`primary`), then each replica's (`replica0`, ...).
    pub fn pool_status(&self) -> Vec<PoolStatus> {
        let status = |name: String, pool: &Pool<AsyncPgConnection>| {
            let status = pool.status();
            PoolStatus {
                name,
                max: status.max_size,
                open: status.size,
                idle: status.available,
                waiting: status.waiting,
            }
        };
        let replicas = self.replicas.iter().flat_map(|replicas| replicas.members.iter());
        std::iter::once(status("primary".into(), &self.pool))
            .chain(replicas.enumerate().map(|(index, replica)| status(format!("replica{index}"), &replica.pool)))
            .collect()
    }

    /// `SELECT 1`: the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.batch_execute("SELECT 1").await.map_err(crate::store_error)
    }
}

impl Setup {
    fn new(url: &SecretString, config: &DbConfig, mode: PoolMode, runtime: Option<Handle>) -> Result<Self, StoreError> {
        let mut connect = PgConnect::from_url(url.expose_secret()).map_err(StoreError::Unknown)?;
        connect.detect_dead_peers(config.acquire_timeout);
        Ok(Self {
            runtime,
            connect,
            url: url.expose_secret().to_owned(),
            acquire_timeout: config.acquire_timeout,
            statement_timeout_ms: config.statement_timeout.as_millis(),
            mode,
        })
    }

    /// A pool of `size` connections. `runtime`: where their driver tasks run; `None`, the runtime
    /// that makes each connection.
    fn pool(&self, size: usize, runtime: Option<Handle>) -> Result<Pool<AsyncPgConnection>, StoreError> {
        let mut manager_config = ManagerConfig::default();
        // No test query on every checkout: a connection that died shows as `Unavailable` on its
        // first use, and the pool drops it.
        manager_config.recycling_method = RecyclingMethod::Fast;
        let (connect, statement_timeout_ms, mode) = (self.connect.clone(), self.statement_timeout_ms, self.mode);
        manager_config.custom_setup = Box::new(move |_url| {
            let connect = connect.clone();
            let establish = async move {
                let (client, connection) = connect
                    .config
                    .connect(connect.tls.clone())
                    .await
                    .map_err(|error| ConnectionError::BadConnection(describe(&error)))?;
                let mut conn = AsyncPgConnection::try_from_client_and_connection(client, connection).await?;
                let setup = match mode {
                    PoolMode::Session => format!(
                        "SET application_name = 'opsd'; SET statement_timeout = {statement_timeout_ms}; SET TIME ZONE 'UTC'"
                    ),
                    // PgBouncer keeps application_name and TimeZone for its client and sets them
                    // on every server connection it lends it; any other SET would stay behind on
                    // one backend, so statement_timeout is the role's (ALTER ROLE ... SET).
                    PoolMode::Transaction => {
                        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
                        "SET application_name = 'opsd'; SET TIME ZONE 'UTC'".to_owned()
                    }
                };
                conn.batch_execute(&setup).await.map_err(ConnectionError::CouldntSetupConfiguration)?;
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

/// Which primary connection a read falls back to.
#[derive(Clone, Copy)]
enum Primary {
    Shared,
    Worker,
}

pub(crate) fn pool_error(error: PoolError) -> StoreError {
    match error {
        PoolError::Timeout(_) | PoolError::Backend(_) | PoolError::Closed => StoreError::Unavailable(error.to_string()),
        _ => StoreError::Unknown(error.to_string()),
    }
}

/// The driver's error with its cause (a refused certificate says why), without the URL.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    match std::error::Error::source(error) {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    }
}
