//! The schema's migrations (`migrations/`, embedded in the binary): applied at start-up, listed and
//! reverted by `opsd migrate`. Each of these runs under one advisory lock, so instances that start
//! together wait for each other and each migration is applied once.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use diesel::migration::{self, Migration, MigrationSource};
use diesel::pg::Pg;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use opsd_core::StoreError;

use crate::Db;
use crate::pool::pool_error;

pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

type Harness = AsyncMigrationHarness<Object<AsyncPgConnection>>;

/// One migration of the binary, and whether the database has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationState {
    /// Its folder's name: `2026-11-22-000001_foundation`.
    pub name: String,
    pub applied: bool,
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

/// Runs the migrations that have not run yet, each under `MigrationPolicy::default()`. Needs Tokio's
/// multi-thread runtime.
pub async fn run_migrations(db: &Db) -> Result<(), StoreError> {
    run_migrations_with(db, MigrationPolicy::default()).await
}

pub async fn run_migrations_with(db: &Db, policy: MigrationPolicy) -> Result<(), StoreError> {
    let applied = under_lock(db, &policy, |harness| {
        let pending = harness.pending_migrations(MIGRATIONS)?;
        for migration in &pending {
            apply(harness, migration.as_ref(), &policy)?;
        }
        Ok(pending.len())
    })
    .await?;
    if applied > 0 {
        tracing::info!(applied, "migrations applied");
    }
    Ok(())
}

/// One migration, tried again after a backoff while it times out waiting for a lock.
fn apply(harness: &mut Harness, migration: &dyn Migration<Pg>, policy: &MigrationPolicy) -> migration::Result<()> {
    let name = migration.name().to_string();
    let mut backoff = policy.first_backoff;
    for attempt in 1..=policy.attempts {
        let started = Instant::now();
        match harness.run_migration(migration) {
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

async fn under_lock<T>(
    db: &Db,
    policy: &MigrationPolicy,
    work: impl FnOnce(&mut Harness) -> migration::Result<T>,
) -> Result<T, StoreError> {
    // The lock lives on a session of its own, closed afterwards (a dead instance's lock goes with
    // its session); waiting for another instance's migrations is not bound by statement_timeout.
    // Both sessions are the session address's (`DATABASE_SESSION_URL`): through a transaction
    // pooler the unlock and the SET would land on other backends.
    let sessions = db.session_pool(2)?;
    let mut lock = Object::take(sessions.get().await.map_err(pool_error)?);
    lock.batch_execute("SET statement_timeout = 0; SELECT pg_advisory_lock(hashtextextended('opsd-migrations', 0))")
        .await
        .map_err(crate::store_error)?;
    let mut session = sessions.get().await.map_err(pool_error)?;
    session
        .batch_execute(&format!(
            "SET lock_timeout = {}; SET statement_timeout = {}",
            policy.lock_timeout.as_millis(),
            policy.statement_timeout.as_millis()
        ))
        .await
        .map_err(crate::store_error)?;
    let mut harness = AsyncMigrationHarness::new(session);
    let done = tokio::task::block_in_place(|| work(&mut harness))
        .map_err(|error| StoreError::Unknown(format!("migrations failed: {error}")));
    let _ = lock.batch_execute("SELECT pg_advisory_unlock(hashtextextended('opsd-migrations', 0))").await;
    done
}
