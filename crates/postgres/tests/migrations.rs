//! How migrations run. A migration that cannot take its lock gives up after its lock timeout (the
//! requests queued behind it go on), is rolled back, and is tried again after a backoff; after its
//! last try it fails with nothing of it applied. Expand and contract: a start (and `opsd migrate`)
//! applies what the previous release runs beside, `--post-deploy` the rest. An index a failed
//! concurrent build left invalid is rebuilt, or the run fails naming it, never kept as it is.

mod support;
use support::pool;

use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_postgres::{
    Db, MigrationPolicy, MigrationState, MigrationStep, migration_status, revert_migrations, run_migrations,
    run_migrations_with,
};
use opsd_test_db::TestDatabase;

async fn migrated() -> (TestDatabase, Db, AsyncPgConnection) {
    let database = TestDatabase::new().await;
    let db = pool(database.url(), 2);
    let pg = AsyncPgConnection::establish(database.url()).await.unwrap();
    (database, db, pg)
}

async fn pending(db: &Db) -> Vec<MigrationState> {
    migration_status(db).await.unwrap().into_iter().filter(|m| !m.applied).collect()
}

/// Migration 34 adds columns to `schedule_proposals`: its `ALTER TABLE` needs the table's ACCESS
/// EXCLUSIVE lock, which a reader's open transaction holds it from. It and the ones after it
/// (`REVERTED` in all) are reverted, so it is the first to apply again.
async fn reverted_and_locked() -> (TestDatabase, Db, AsyncPgConnection) {
    let (database, db, mut reader) = migrated().await;
    assert_eq!(revert_migrations(&db, REVERTED).await.unwrap().len(), REVERTED);
    reader.batch_execute("BEGIN; SELECT count(*) FROM schedule_proposals").await.unwrap();
    (database, db, reader)
}

/// Migration 34 and the five after it (35 to 39).
const REVERTED: usize = 6;

fn policy(attempts: u32) -> MigrationPolicy {
    MigrationPolicy { attempts, first_backoff: Duration::from_millis(100), ..MigrationPolicy::default() }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_migration_waiting_on_a_lock_lets_requests_through_and_is_tried_again_once_it_is_free() {
    let (database, db, mut reader) = reverted_and_locked().await;
    let migrating = tokio::spawn({
        let db = db.clone();
        async move { run_migrations_with(&db, policy(5), MigrationStep::PostDeploy).await }
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
    assert_eq!(pending(&db).await.len(), 0, "applied on a later try");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_migration_that_never_gets_its_lock_fails_after_its_last_try_with_nothing_applied() {
    let (_database, db, mut reader) = reverted_and_locked().await;
    let error = run_migrations_with(&db, policy(2), MigrationStep::PostDeploy).await.unwrap_err();
    assert!(error.to_string().contains("lock timeout"), "{error}");
    reader.batch_execute("COMMIT").await.unwrap();
    assert_eq!(pending(&db).await.len(), REVERTED, "rolled back: still pending, and the ones after it");
    // Once the lock is free, the next start applies it.
    run_migrations_with(&db, policy(1), MigrationStep::PostDeploy).await.unwrap();
    assert_eq!(pending(&db).await.len(), 0);
}

/// Migration 37 builds an index CONCURRENTLY, 38 rewrites rate_limit_take, 39 (post-deploy) drops
/// rate_limit_hit.
const FROM_37: usize = 3;
const INDEX: &str = "schedule_shifts_location_employee_idx";

async fn exists(pg: &mut AsyncPgConnection, check: &str) -> bool {
    // An error from the DO block is the answer "no".
    pg.batch_execute(&format!("DO $$ BEGIN IF NOT ({check}) THEN RAISE 'no'; END IF; END $$")).await.is_ok()
}

async fn index_is_valid(pg: &mut AsyncPgConnection, name: &str) -> bool {
    exists(pg, &format!("SELECT indisvalid FROM pg_index WHERE indexrelid = '{name}'::regclass")).await
}

const RATE_LIMIT_HIT: &str = "to_regprocedure('rate_limit_hit(text, integer, interval, timestamptz)') IS NOT NULL";

#[tokio::test(flavor = "multi_thread")]
async fn a_start_leaves_the_contract_steps_to_post_deploy() {
    let (_database, db, mut pg) = migrated().await;
    assert_eq!(revert_migrations(&db, FROM_37).await.unwrap().len(), FROM_37);
    assert!(exists(&mut pg, RATE_LIMIT_HIT).await, "the previous schema has rate_limit_hit");

    run_migrations(&db, MigrationStep::PreDeploy).await.unwrap();
    let waiting = pending(&db).await;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert!(waiting[0].post_deploy && waiting[0].name.ends_with("_drop_rate_limit_hit_post_deploy"), "{waiting:?}");
    assert!(exists(&mut pg, RATE_LIMIT_HIT).await, "kept for the previous release's instances");
    assert!(index_is_valid(&mut pg, INDEX).await, "built concurrently");
    // The rewritten rate_limit_take admits and refuses as before, calling nothing that will go.
    pg.batch_execute(
        "DO $$ DECLARE r RECORD; BEGIN
           SELECT * INTO r FROM rate_limit_take('probe', 1, interval '1 minute', now());
           IF r.wait <> 0 OR r.remaining <> 0 THEN RAISE 'first call: %', r; END IF;
           SELECT * INTO r FROM rate_limit_take('probe', 1, interval '1 minute', now());
           IF r.wait < 1 OR r.remaining <> 0 OR r.reset < 1 THEN RAISE 'second call: %', r; END IF;
         END $$",
    )
    .await
    .unwrap();

    run_migrations(&db, MigrationStep::PostDeploy).await.unwrap();
    assert!(pending(&db).await.is_empty());
    assert!(!exists(&mut pg, RATE_LIMIT_HIT).await, "dropped once no old instance is left");
    pg.batch_execute("SELECT rate_limit_take('probe-2', 5, interval '1 minute', now())").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_database_gets_every_migration_at_its_first_start() {
    let (_database, db, _pg) = migrated().await;
    let total = migration_status(&db).await.unwrap().len();
    assert_eq!(revert_migrations(&db, total).await.unwrap().len(), total);
    run_migrations(&db, MigrationStep::PreDeploy).await.unwrap();
    assert!(pending(&db).await.is_empty(), "no older instance can read a database that had no schema");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_index_a_failed_build_left_invalid_is_rebuilt_before_its_migration_runs_again() {
    let (_database, db, mut pg) = migrated().await;
    assert_eq!(revert_migrations(&db, FROM_37).await.unwrap().len(), FROM_37);
    // What a build of migration 37 cancelled halfway leaves: the index, marked invalid.
    pg.batch_execute(&format!(
        "CREATE INDEX {INDEX} ON schedule_shifts (location_id, employee_key);
         UPDATE pg_index SET indisvalid = false WHERE indexrelid = '{INDEX}'::regclass"
    ))
    .await
    .unwrap();
    assert!(!index_is_valid(&mut pg, INDEX).await);

    run_migrations(&db, MigrationStep::PostDeploy).await.unwrap();
    assert!(pending(&db).await.is_empty());
    assert!(index_is_valid(&mut pg, INDEX).await, "rebuilt, not kept invalid by IF NOT EXISTS");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_index_that_cannot_be_rebuilt_fails_the_start_naming_it() {
    let (_database, db, mut pg) = migrated().await;
    pg.batch_execute("CREATE TABLE probe (a INTEGER); INSERT INTO probe VALUES (1), (1)").await.unwrap();
    let failed = pg.batch_execute("CREATE UNIQUE INDEX CONCURRENTLY probe_a_key ON probe (a)").await;
    assert!(failed.is_err(), "the duplicate fails the build");
    assert!(!index_is_valid(&mut pg, "probe_a_key").await, "and leaves it invalid");

    let error = run_migrations(&db, MigrationStep::PreDeploy).await.unwrap_err().to_string();
    assert!(error.contains("REINDEX INDEX CONCURRENTLY public.probe_a_key: could not create unique index"), "{error}");
    assert!(!index_is_valid(&mut pg, "probe_a_key").await, "still there to be seen, not dropped");

    // Once the duplicate is gone, the next start rebuilds it.
    pg.batch_execute("DELETE FROM probe WHERE ctid = (SELECT min(ctid) FROM probe)").await.unwrap();
    run_migrations(&db, MigrationStep::PreDeploy).await.unwrap();
    assert!(index_is_valid(&mut pg, "probe_a_key").await);
    assert!(
        exists(&mut pg, "NOT EXISTS (SELECT 1 FROM pg_index WHERE NOT indisvalid)").await,
        "nor its rebuild's leftover"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn instances_starting_together_wait_for_a_concurrent_index_build_without_blocking_it() {
    let (database, db, mut pg) = migrated().await;
    assert_eq!(revert_migrations(&db, FROM_37).await.unwrap().len(), FROM_37);
    // Three instances at once, each with its own pool: the two that wait for the migrations' lock
    // must hold no snapshot the first one's CREATE INDEX CONCURRENTLY would wait for.
    let starts: Vec<_> = (0..3)
        .map(|_| {
            let db = pool(database.url(), 2);
            tokio::spawn(async move { run_migrations(&db, MigrationStep::PostDeploy).await })
        })
        .collect();
    for start in starts {
        start.await.unwrap().unwrap();
    }
    assert!(pending(&db).await.is_empty());
    assert!(index_is_valid(&mut pg, INDEX).await);
}
