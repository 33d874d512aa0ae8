use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text};
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::StoreError;
use opsd_jobs::{JobActivity, JobHistory, JobLease, JobLocks, JobRunStore, JobStatus, LastRun};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::prepared::prepared;
use crate::schema::job_runs;
use crate::{Db, store_error};

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// Session-level advisory locks, one per job name, held on a connection for the whole run.
pub struct PgJobLocks {
    db: Db,
}

impl PgJobLocks {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl JobLocks for PgJobLocks {
    async fn try_acquire(&self, job: &str) -> Result<Option<Box<dyn JobLease>>, StoreError> {
        let mut conn = self.db.conn().await?;
        let locked: Locked = prepared("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked")
            .bind::<Text, _>(job)
            .get_result(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(locked.locked.then(|| Box::new(PgJobLease { conn: Some(conn), job: job.to_owned() }) as Box<dyn JobLease>))
    }
}

struct PgJobLease {
    conn: Option<Object<AsyncPgConnection>>,
    job: String,
}

#[async_trait]
impl JobLease for PgJobLease {
    async fn release(mut self: Box<Self>) {
        let Some(mut conn) = self.conn.take() else { return };
        let unlocked = prepared("SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS locked")
            .bind::<Text, _>(&self.job)
            .get_result::<Locked>(&mut conn)
            .await;
        if unlocked.is_err() {
            // Closing the session is the other way to release a session lock.
            drop(Object::take(conn));
        }
    }
}

impl Drop for PgJobLease {
    fn drop(&mut self) {
        // Dropped without release (a panic mid-run): close the session rather than hand a
        // connection that still holds the lock back to the pool.
        if let Some(conn) = self.conn.take() {
            drop(Object::take(conn));
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
