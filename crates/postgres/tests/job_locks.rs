//! The jobs' locks live on one session of the instance's own: any number of running jobs leave the
//! shared pool whole, a job runs once across instances and once within one, and a lease dropped
//! without release (a panicking run) still unlocks.

mod support;
use support::pool;

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;
use opsd_jobs::JobLocks;
use opsd_postgres::{Db, PgJobLocks};
use opsd_test_db::TestDatabase;

const JOBS: usize = 10;

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// Whether another instance's session could take `job`'s lock now (it lets it go at once).
async fn free_elsewhere(other: &Db, job: &str) -> bool {
    let mut conn = other.conn().await.unwrap();
    let taken = diesel::sql_query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked")
        .bind::<diesel::sql_types::Text, _>(job)
        .get_result::<Locked>(&mut conn)
        .await
        .unwrap()
        .locked;
    if taken {
        diesel::sql_query("SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS locked")
            .bind::<diesel::sql_types::Text, _>(job)
            .get_result::<Locked>(&mut conn)
            .await
            .unwrap();
    }
    taken
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_running_jobs_leave_the_shared_pool_whole_and_each_runs_once() {
    let database = TestDatabase::new().await;
    let mut db = pool(database.url(), 4);
    let locks = PgJobLocks::new(db.split_session().unwrap());
    let other = pool(database.url(), 1);

    let mut leases = Vec::new();
    for job in 0..JOBS {
        leases.push(locks.try_acquire(&format!("job-{job}")).await.unwrap().expect("a free job's lock"));
    }
    // The rest of the budget: with a pooled connection per lease these would wait and time out.
    let mut shared = Vec::new();
    for _ in 0..3 {
        shared.push(tokio::time::timeout(Duration::from_secs(1), db.conn()).await.expect("not waiting").unwrap());
    }
    drop(shared);

    assert!(locks.try_acquire("job-0").await.unwrap().is_none(), "a second run in the same instance");
    assert!(!free_elsewhere(&other, "job-0").await, "another instance's run");

    let first = leases.remove(0);
    first.release().await;
    assert!(free_elsewhere(&other, "job-0").await, "released");
    let again = locks.try_acquire("job-0").await.unwrap().expect("the instance runs it again");
    again.release().await;

    // A run that panics drops its lease unreleased: the lock is let go in the background. The
    // instance forgets the job only after its unlock is answered, so it is polled here rather than
    // another session (which could see the lock free a moment before that).
    drop(leases.remove(0));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let again = loop {
        if let Some(lease) = locks.try_acquire("job-1").await.unwrap() {
            break lease;
        }
        assert!(std::time::Instant::now() < deadline, "a dropped lease unlocks");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(!free_elsewhere(&other, "job-1").await, "the instance runs the job again, holding its lock");
    again.release().await;
    assert!(free_elsewhere(&other, "job-1").await, "released");
}
