//! A migration that cannot take its lock gives up after its lock timeout (the requests queued behind
//! it go on), is rolled back, and is tried again after a backoff; after its last try it fails with
//! nothing of it applied.

use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_postgres::{Db, DbConfig, MigrationPolicy, migration_status, revert_migrations, run_migrations_with};
use opsd_test_db::TestDatabase;

/// Migration 34 adds columns to `schedule_proposals`: its `ALTER TABLE` needs the table's ACCESS
/// EXCLUSIVE lock, which a reader's open transaction holds it from. It and the ones after it
/// (`REVERTED` in all) are reverted, so it is the first to apply again.
async fn reverted_and_locked() -> (TestDatabase, Db, AsyncPgConnection) {
    let database = TestDatabase::new().await;
    let db = Db::connect(&DbConfig {
        url: database.url().to_owned().into(),
        max_connections: 2,
        acquire_timeout: Duration::from_secs(3),
        statement_timeout: Duration::from_secs(30),
    })
    .unwrap();
    assert_eq!(revert_migrations(&db, REVERTED).await.unwrap().len(), REVERTED);
    let mut reader = AsyncPgConnection::establish(database.url()).await.unwrap();
    reader.batch_execute("BEGIN; SELECT count(*) FROM schedule_proposals").await.unwrap();
    (database, db, reader)
}

/// Migration 34 and the two after it (35 and 36).
const REVERTED: usize = 3;

async fn pending(db: &Db) -> usize {
    migration_status(db).await.unwrap().iter().filter(|m| !m.applied).count()
}

fn policy(attempts: u32) -> MigrationPolicy {
    MigrationPolicy { attempts, first_backoff: Duration::from_millis(100), ..MigrationPolicy::default() }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_migration_waiting_on_a_lock_lets_requests_through_and_is_tried_again_once_it_is_free() {
    let (database, db, mut reader) = reverted_and_locked().await;
    let migrating = tokio::spawn({
        let db = db.clone();
        async move { run_migrations_with(&db, policy(5)).await }
    });
    // While the migration waits and backs off, another request on the table is answered: behind a
    // waiting ALTER it queues for at most the migration's 2 s lock timeout, never for good.
    let mut other = AsyncPgConnection::establish(database.url()).await.unwrap();
    other.batch_execute("SET statement_timeout = '10s'").await.unwrap();
    // The reader holds the lock past the migration's first try (2.4 s against its 2 s timeout).
    for _ in 0..6 {
        other.batch_execute("SELECT count(*) FROM schedule_proposals").await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    assert!(!migrating.is_finished(), "the migration still waits for the reader");
    reader.batch_execute("COMMIT").await.unwrap();
    migrating.await.unwrap().unwrap();
    assert_eq!(pending(&db).await, 0, "applied on a later try");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_migration_that_never_gets_its_lock_fails_after_its_last_try_with_nothing_applied() {
    let (_database, db, mut reader) = reverted_and_locked().await;
    let error = run_migrations_with(&db, policy(2)).await.unwrap_err();
    assert!(error.to_string().contains("lock timeout"), "{error}");
    reader.batch_execute("COMMIT").await.unwrap();
    assert_eq!(pending(&db).await, REVERTED, "rolled back: still pending, and the ones after it");
    // Once the lock is free, the next start applies it.
    run_migrations_with(&db, policy(1)).await.unwrap();
    assert_eq!(pending(&db).await, 0);
}
