use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text};
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::StoreError;
use opsd_jobs::{JobActivity, JobHistory, JobLease, JobLocks, JobRunStore, JobStatus, LastRun};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::pool::pool_error;
use crate::prepared::prepared;
use crate::schema::job_runs;
use crate::{Db, store_error};

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// Session-level advisory locks, one per job name, all held on one session of the instance's own
/// ([`Db::split_session`]) for as long as each run lasts.
///
/// Why one session: a run used to hold a pooled connection of its own for its lock, then take
/// another for its work. Ten jobs called in the same second took every connection of a
/// six-connection pool and each waited for a second one: every job and every request waited out
/// the acquire timeout and was answered 503 (`just bench`'s mixed workload, with each job on its
/// own schedule as a cron scheduler calls them). Session locks are reentrant within a session, so
/// the instance's own runs are told apart in `held`.
pub struct PgJobLocks {
    session: Pool<AsyncPgConnection>,
    held: Arc<Mutex<HashSet<String>>>,
}

impl PgJobLocks {
    /// `session`: a pool of one connection that nothing else uses.
    pub fn new(session: Pool<AsyncPgConnection>) -> Self {
        Self { session, held: Arc::default() }
    }
}

/// Takes `job` out of the instance's held set, once its lock is gone.
fn forget(held: &Mutex<HashSet<String>>, job: &str) {
    held.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(job);
}

async fn lock_statement(session: &Pool<AsyncPgConnection>, sql: &'static str, job: &str) -> Result<bool, StoreError> {
    let mut conn = session.get().await.map_err(pool_error)?;
    let answer = prepared(sql).bind::<Text, _>(job).get_result::<Locked>(&mut conn).await;
    match answer {
        Ok(locked) => Ok(locked.locked),
        Err(error) => {
            // Closing the session is the other way to release its locks, and a session whose
            // lock statement failed is not one to keep locks on.
            drop(Object::take(conn));
            Err(store_error(error))
        }
    }
}

#[async_trait]
impl JobLocks for PgJobLocks {
    async fn try_acquire(&self, job: &str) -> Result<Option<Box<dyn JobLease>>, StoreError> {
        if !self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(job.to_owned()) {
            return Ok(None);
        }
        let locked =
            lock_statement(&self.session, "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", job)
                .await
                .inspect_err(|_| forget(&self.held, job))?;
        if !locked {
            forget(&self.held, job);
            return Ok(None);
        }
        let lease =
            PgJobLease { session: self.session.clone(), held: self.held.clone(), job: job.to_owned(), released: false };
        Ok(Some(Box::new(lease)))
    }
}

struct PgJobLease {
    session: Pool<AsyncPgConnection>,
    held: Arc<Mutex<HashSet<String>>>,
    job: String,
    released: bool,
}

impl PgJobLease {
    fn unlock(&self) -> impl Future<Output = ()> + Send + 'static {
        let (session, held, job) = (self.session.clone(), self.held.clone(), self.job.clone());
        async move {
            let unlocked =
                lock_statement(&session, "SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS locked", &job).await;
            if let Err(error) = unlocked {
                tracing::warn!(job, %error, "unlocking a job failed; its session was closed instead");
            }
            forget(&held, &job);
        }
    }
}

#[async_trait]
impl JobLease for PgJobLease {
    async fn release(mut self: Box<Self>) {
        self.released = true;
        self.unlock().await;
    }
}

impl Drop for PgJobLease {
    fn drop(&mut self) {
        // Dropped without release (a panic mid-run): unlock in the background; until then the
        // instance still counts the job as held, so no run of it starts here in between.
        if !self.released
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(self.unlock());
        }
    }
}

pub struct PgJobRunStore {
    db: Db,
}

impl PgJobRunStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl JobRunStore for PgJobRunStore {
    async fn started(&self, run: Uuid, job: &str, correlation: Uuid, at: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        // The caller holds the job's lock, so a run of it still `running` lost its instance.
        let abandoned =
            diesel::update(job_runs::table.filter(job_runs::job.eq(job)).filter(job_runs::status.eq("running")))
                .set((
                    job_runs::status.eq("abandoned"),
                    job_runs::finished_at.eq(at),
                    job_runs::summary.eq(serde_json::json!({ "error": "its instance stopped before the run ended" })),
                ))
                .execute(&mut conn)
                .await
                .map_err(store_error)?;
        if abandoned > 0 {
            tracing::warn!(job, abandoned, "runs whose instance died were marked abandoned");
        }
        diesel::insert_into(job_runs::table)
            .values((
                job_runs::id.eq(run),
                job_runs::job.eq(job),
                job_runs::correlation_id.eq(correlation),
                job_runs::started_at.eq(at),
                job_runs::status.eq("running"),
            ))
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn finished(
        &self,
        run: Uuid,
        status: JobStatus,
        summary: serde_json::Value,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(job_runs::table.find(run))
            .set((job_runs::status.eq(status.as_str()), job_runs::summary.eq(summary), job_runs::finished_at.eq(at)))
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}

#[derive(QueryableByName)]
struct ActivityRow {
    #[diesel(sql_type = Text)]
    job: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    status: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
    started_at: Option<OffsetDateTime>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
    finished_at: Option<OffsetDateTime>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Jsonb>)]
    summary: Option<serde_json::Value>,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    runs: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    failures: i64,
}

#[async_trait]
impl JobHistory for PgJobRunStore {
    /// One statement; per job, its latest run and its window's counts each read through
    /// `job_runs_job_started_idx`, so the page costs the same however long the history grows.
    async fn activity(&self, jobs: &[String], since: OffsetDateTime) -> Result<Vec<JobActivity>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<ActivityRow> = prepared(
            "SELECT j.job, l.status, l.started_at, l.finished_at, l.summary, c.runs, c.failures \
             FROM unnest($1::text[]) WITH ORDINALITY AS j (job, position) \
             LEFT JOIN LATERAL (SELECT status, started_at, finished_at, summary FROM job_runs \
                 WHERE job = j.job ORDER BY started_at DESC LIMIT 1) l ON true \
             CROSS JOIN LATERAL (SELECT count(*) AS runs, \
                 count(*) FILTER (WHERE status IN ('failed', 'abandoned')) AS failures \
                 FROM job_runs WHERE job = j.job AND started_at >= $2) c \
             ORDER BY j.position",
        )
        .bind::<diesel::sql_types::Array<Text>, _>(jobs)
        .bind::<diesel::sql_types::Timestamptz, _>(since)
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|row| JobActivity {
                job: row.job,
                last: match (row.status, row.started_at) {
                    (Some(status), Some(started_at)) => Some(LastRun {
                        status,
                        started_at,
                        finished_at: row.finished_at,
                        summary: row.summary.unwrap_or_default(),
                    }),
                    _ => None,
                },
                runs: row.runs,
                failures: row.failures,
            })
            .collect())
    }
}
