//! The schema's migrations (`migrations/`, embedded in the binary): applied at start-up, listed and
//! reverted by `opsd migrate`. Each of these runs under one advisory lock, so instances that start
//! together wait for each other and each migration is applied once.
//!
//! Expand and contract: a migration whose folder ends in `_post_deploy` removes what the previous
//! release still uses, so it waits for `opsd migrate --post-deploy`, run once no instance of that
//! release is left; every other migration leaves a schema the previous release runs on.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::migration::{self, Migration, MigrationSource};
use diesel::pg::Pg;
use diesel::sql_types::Text;
use diesel::{QueryableByName, RunQueryDsl};
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use opsd_core::StoreError;

use crate::Db;
use crate::pool::pool_error;

pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// The migration session as a blocking connection (diesel's migrations are blocking), used on a
/// thread Tokio lets block.
type Harness = AsyncConnectionWrapper<Object<AsyncPgConnection>>;

/// One migration of the binary, and whether the database has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationState {
    /// Its folder's name: `2026-11-22-000001_foundation`.
    pub name: String,
    pub applied: bool,
    /// Applied only by `opsd migrate --post-deploy`.
    pub post_deploy: bool,
}

/// Which migrations a run applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationStep {
    /// Before and during a rollout (`opsd migrate`, an instance starting): those the previous
    /// release runs beside. On a database that has none applied yet, every one: no older instance
    /// can be reading it.
    PreDeploy,
    /// Once every instance runs this release (`opsd migrate --post-deploy`): every pending one,
    /// the contract steps among them, in order.
    PostDeploy,
}

const POST_DEPLOY_SUFFIX: &str = "_post_deploy";

fn is_post_deploy(migration: &dyn Migration<Pg>) -> bool {
    migration.name().to_string().ends_with(POST_DEPLOY_SUFFIX)
}

/// How a migration may wait and run: a migration that waits for a lock past `lock_timeout` gives up
/// (rolled back: each runs in its own transaction) instead of queueing every request behind its
/// lock, and is tried again after a backoff, at most `attempts` times in all; a statement runs at
/// most `statement_timeout`. A migration's own `SET LOCAL` overrides both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrationPolicy {
    pub lock_timeout: Duration,
    pub statement_timeout: Duration,
    pub attempts: u32,
    /// Doubled after each try.
    pub first_backoff: Duration,
}

impl Default for MigrationPolicy {
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(2),
            statement_timeout: Duration::from_secs(300),
            attempts: 5,
            first_backoff: Duration::from_secs(1),
        }
    }
}

/// PostgreSQL's message for a statement cancelled by `lock_timeout` (SQLSTATE 55P03), which diesel
/// passes on as text only.
const LOCK_TIMEOUT_MESSAGE: &str = "lock timeout";

/// Runs the migrations of `step` that have not run yet, each under `MigrationPolicy::default()`.
/// Needs Tokio's multi-thread runtime.
pub async fn run_migrations(db: &Db, step: MigrationStep) -> Result<(), StoreError> {
    run_migrations_with(db, MigrationPolicy::default(), step).await
}

pub async fn run_migrations_with(db: &Db, policy: MigrationPolicy, step: MigrationStep) -> Result<(), StoreError> {
    let (applied, waiting) = under_lock(db, &policy, |harness| {
        repair_invalid_indexes(harness)?;
        let fresh = harness.applied_migrations()?.is_empty();
        let (run, waiting): (Vec<_>, Vec<_>) = harness
            .pending_migrations(MIGRATIONS)?
            .into_iter()
            .partition(|migration| step == MigrationStep::PostDeploy || fresh || !is_post_deploy(migration.as_ref()));
        for migration in &run {
            apply(harness, migration.as_ref(), &policy)?;
        }
        Ok((run.len(), waiting.len()))
    })
    .await?;
    if applied > 0 {
        tracing::info!(applied, "migrations applied");
    }
    if waiting > 0 {
        tracing::info!(waiting, "post-deploy migrations wait for `opsd migrate --post-deploy`");
    }
    Ok(())
}

/// One migration, tried again after a backoff while it times out waiting for a lock. Before a retry,
/// an index the failed try left invalid is rebuilt (`repair_invalid_indexes`; the run repairs once
/// before the first).
fn apply(harness: &mut Harness, migration: &dyn Migration<Pg>, policy: &MigrationPolicy) -> migration::Result<()> {
    let name = migration.name().to_string();
    let mut backoff = policy.first_backoff;
    for attempt in 1..=policy.attempts {
        let started = Instant::now();
        let retry_ready = if attempt > 1 { repair_invalid_indexes(harness) } else { Ok(()) };
        match retry_ready.and_then(|()| run_one(harness, migration, policy)) {
            Ok(_) => {
                tracing::info!(migration = %name, attempt, ms = started.elapsed().as_millis() as u64, "migration applied");
                return Ok(());
            }
            Err(error) if error.to_string().contains(LOCK_TIMEOUT_MESSAGE) && attempt < policy.attempts => {
                tracing::warn!(
                    migration = %name,
                    attempt,
                    backoff_ms = backoff.as_millis() as u64,
                    "a migration waited past its lock timeout and was rolled back; trying again"
                );
                std::thread::sleep(backoff);
                backoff *= 2;
            }
            Err(error) => {
                tracing::error!(migration = %name, attempt, %error, "a migration failed");
                return Err(error);
            }
        }
    }
    unreachable!("the last attempt returns")
}

/// Runs a migration. One outside a transaction (a concurrent index build) may wait for locks as long
/// as a statement may run: its waits (for the table's SHARE UPDATE EXCLUSIVE lock, for older
/// snapshots) hold back no reader or writer, only schema changes and vacuum of that table.
fn run_one(harness: &mut Harness, migration: &dyn Migration<Pg>, policy: &MigrationPolicy) -> migration::Result<()> {
    if migration.metadata().run_in_transaction() {
        return harness.run_migration(migration).map(drop);
    }
    SimpleConnection::batch_execute(harness, &format!("SET lock_timeout = {}", policy.statement_timeout.as_millis()))?;
    let ran = harness.run_migration(migration).map(drop);
    SimpleConnection::batch_execute(harness, &format!("SET lock_timeout = {}", policy.lock_timeout.as_millis()))?;
    ran
}

/// An index `CREATE INDEX CONCURRENTLY` or `REINDEX CONCURRENTLY` left invalid when it failed
/// (cancelled, timed out, a duplicate key): never used by a query, yet written on every change.
#[derive(QueryableByName)]
struct InvalidIndex {
    #[diesel(sql_type = Text)]
    name: String,
    /// A `REINDEX`'s leftover copy (`_ccnew`, `_ccold`) is dropped; any other is rebuilt in place.
    #[diesel(sql_type = Text)]
    repair: String,
}

/// Those of this schema; an index still being built (by another session) is left to its build.
const INVALID_INDEXES: &str = "\
    SELECT c.relname::text AS name, \
           CASE WHEN c.relname ~ '_cc(new|old)[0-9]*$' \
                THEN format('DROP INDEX CONCURRENTLY %I.%I', n.nspname, c.relname) \
                ELSE format('REINDEX INDEX CONCURRENTLY %I.%I', n.nspname, c.relname) END AS repair \
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
    WHERE NOT i.indisvalid AND n.nspname = current_schema() \
      AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.relid = i.indrelid) \
    ORDER BY 1";

/// Finds the invalid indexes and rebuilds them: a migration that builds one `IF NOT EXISTS` would
/// otherwise keep it, invalid, for good. A rebuild that fails again fails the run.
fn repair_invalid_indexes(harness: &mut Harness) -> migration::Result<()> {
    for index in diesel::sql_query(INVALID_INDEXES).load::<InvalidIndex>(harness)? {
        tracing::warn!(index = %index.name, repair = %index.repair, "an index a failed build left invalid");
        SimpleConnection::batch_execute(harness, &index.repair)
            .map_err(|error| format!("{}: {error}", index.repair))?;
    }
    Ok(())
}

/// Every migration of the binary, oldest first, with whether it is applied.
pub async fn migration_status(db: &Db) -> Result<Vec<MigrationState>, StoreError> {
    under_lock(db, &MigrationPolicy::default(), |harness| {
        let applied: HashSet<String> = harness.applied_migrations()?.iter().map(ToString::to_string).collect();
        let mut all = MigrationSource::<Pg>::migrations(&MIGRATIONS)?;
        all.sort_by_key(|m| m.name().version().to_string());
        Ok(all
            .iter()
            .map(|m| MigrationState {
                name: m.name().to_string(),
                applied: applied.contains(&m.name().version().to_string()),
                post_deploy: is_post_deploy(m.as_ref()),
            })
            .collect())
    })
    .await
}

/// Runs the `down.sql` of the last `count` applied migrations, newest first; answers their versions.
pub async fn revert_migrations(db: &Db, count: usize) -> Result<Vec<String>, StoreError> {
    under_lock(db, &MigrationPolicy::default(), |harness| {
        let mut reverted = Vec::new();
        while reverted.len() < count && !harness.applied_migrations()?.is_empty() {
            reverted.push(harness.revert_last_migration(MIGRATIONS)?.to_string());
        }
        Ok(reverted)
    })
    .await
}

#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    taken: bool,
}

const LOCK_POLL: Duration = Duration::from_millis(200);

async fn under_lock<T>(
    db: &Db,
    policy: &MigrationPolicy,
    work: impl FnOnce(&mut Harness) -> migration::Result<T>,
) -> Result<T, StoreError> {
    // The lock lives on a session of its own, closed afterwards (a dead instance's lock goes with
    // its session). Both sessions are the session address's (`DATABASE_SESSION_URL`): through a
    // transaction pooler the unlock and the SET would land on other backends.
    let sessions = db.session_pool(2)?;
    let mut lock = Object::take(sessions.get().await.map_err(pool_error)?);
    // Polled, not waited for in one statement: a waiting statement holds a snapshot, and a
    // CREATE INDEX CONCURRENTLY of the instance that holds the lock waits for every older snapshot.
    let try_lock = || diesel::sql_query("SELECT pg_try_advisory_lock(hashtextextended('opsd-migrations', 0)) AS taken");
    while !diesel_async::RunQueryDsl::get_result::<Taken>(try_lock(), &mut lock)
        .await
        .map_err(crate::store_error)?
        .taken
    {
        tokio::time::sleep(LOCK_POLL).await;
    }
    let mut session = sessions.get().await.map_err(pool_error)?;
    session
        .batch_execute(&format!(
            "SET lock_timeout = {}; SET statement_timeout = {}",
            policy.lock_timeout.as_millis(),
            policy.statement_timeout.as_millis()
        ))
        .await
        .map_err(crate::store_error)?;
    let mut harness = Harness::from(session);
    let done = tokio::task::block_in_place(|| work(&mut harness))
        .map_err(|error| StoreError::Unknown(format!("migrations failed: {error}")));
    let _ = lock.batch_execute("SELECT pg_advisory_unlock(hashtextextended('opsd-migrations', 0))").await;
    done
}
