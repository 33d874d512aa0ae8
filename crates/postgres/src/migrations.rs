//! The schema's migrations (`migrations/`, embedded in the binary): applied at start-up, listed and
//! reverted by `opsd migrate`. Each of these runs under one advisory lock, so instances that start
//! together wait for each other and each migration is applied once.

use std::collections::HashSet;

use diesel::migration::{self, MigrationSource};
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

/// Runs the migrations that have not run yet. Needs Tokio's multi-thread runtime.
pub async fn run_migrations(db: &Db) -> Result<(), StoreError> {
    let applied = under_lock(db, |harness| harness.run_pending_migrations(MIGRATIONS).map(|done| done.len())).await?;
    if applied > 0 {
        tracing::info!(applied, "migrations applied");
    }
    Ok(())
}

/// Every migration of the binary, oldest first, with whether it is applied.
pub async fn migration_status(db: &Db) -> Result<Vec<MigrationState>, StoreError> {
    under_lock(db, |harness| {
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
    under_lock(db, |harness| {
        let mut reverted = Vec::new();
        while reverted.len() < count && !harness.applied_migrations()?.is_empty() {
            reverted.push(harness.revert_last_migration(MIGRATIONS)?.to_string());
        }
        Ok(reverted)
    })
    .await
}

async fn under_lock<T>(db: &Db, work: impl FnOnce(&mut Harness) -> migration::Result<T>) -> Result<T, StoreError> {
    // The lock lives on a session of its own, closed afterwards (a dead instance's lock goes with
    // its session); waiting for another instance's migrations is not bound by statement_timeout.
    // Both sessions are the session address's (`DATABASE_SESSION_URL`): through a transaction
    // pooler the unlock and the SET would land on other backends.
    let sessions = db.session_pool(2)?;
    let mut lock = Object::take(sessions.get().await.map_err(pool_error)?);
    lock.batch_execute("SET statement_timeout = 0; SELECT pg_advisory_lock(hashtextextended('opsd-migrations', 0))")
        .await
        .map_err(crate::store_error)?;
    let mut harness = AsyncMigrationHarness::new(sessions.get().await.map_err(pool_error)?);
    let done = tokio::task::block_in_place(|| work(&mut harness))
        .map_err(|error| StoreError::Unknown(format!("migrations failed: {error}")));
    let _ = lock.batch_execute("SELECT pg_advisory_unlock(hashtextextended('opsd-migrations', 0))").await;
    done
}
