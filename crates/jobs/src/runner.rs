use std::future::Future;
use std::sync::Arc;

use opsd_core::{Clock, StoreError};
use uuid::Uuid;

use crate::ports::{JobLocks, JobRunStore};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    Ok,
    Partial,
    Failed,
    Skipped,
    Disabled,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Ok => "ok",
            JobStatus::Partial => "partial",
            JobStatus::Failed => "failed",
            JobStatus::Skipped => "skipped",
            JobStatus::Disabled => "disabled",
        }
    }
}

/// What a job's body reports: its status and a summary kept with the run.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutcome<T> {
    pub status: JobStatus,
    pub summary: serde_json::Value,
    pub result: T,
}

/// One call of a job: either it ran, or another run held the lock.
#[derive(Debug, Clone, PartialEq)]
pub enum JobRun<T> {
    Ran { correlation_id: Uuid, outcome: JobOutcome<T> },
    AlreadyRunning,
}

#[derive(derive_new::new)]
pub struct JobRunner {
    locks: Arc<dyn JobLocks>,
    runs: Arc<dyn JobRunStore>,
    clock: Arc<dyn Clock>,
}

impl JobRunner {
    /// Runs `body` under the job's lock and records the run. A failing body is recorded as
    /// `failed` and its error is returned.
    pub async fn run<T, E, F, Fut>(&self, job: &str, body: F) -> Result<JobRun<T>, E>
    where
        F: FnOnce(Uuid) -> Fut,
        Fut: Future<Output = Result<JobOutcome<T>, E>>,
        E: From<StoreError> + std::fmt::Display,
    {
        let Some(lease) = self.locks.try_acquire(job).await? else {
            tracing::info!(job, "skipped: another run holds the lock");
            return Ok(JobRun::AlreadyRunning);
        };
        let correlation_id = Uuid::now_v7();
        let run_id = Uuid::now_v7();
        let recorded = self.runs.started(run_id, job, correlation_id, self.clock.now()).await;
        let outcome = match recorded {
            Ok(()) => body(correlation_id).await,
            Err(error) => Err(E::from(error)),
        };
        let finish = match &outcome {
            Ok(outcome) => self.runs.finished(run_id, outcome.status, outcome.summary.clone(), self.clock.now()).await,
            Err(error) => {
                tracing::error!(job, %correlation_id, %error, "job failed");
                let summary = serde_json::json!({ "error": "the run failed; see the log for its correlation id" });
                self.runs.finished(run_id, JobStatus::Failed, summary, self.clock.now()).await
            }
        };
        lease.release().await;
        if let Err(error) = finish {
            tracing::error!(job, %correlation_id, %error, "recording the end of a job run failed");
        }
        outcome.map(|outcome| JobRun::Ran { correlation_id, outcome })
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::MockClock;
    use time::OffsetDateTime;

    use super::*;
    use crate::ports::{MockJobLease, MockJobLocks, MockJobRunStore};

    #[derive(Debug, PartialEq)]
    struct Failure(String);

    impl From<StoreError> for Failure {
        fn from(error: StoreError) -> Self {
            Failure(error.to_string())
        }
    }

    impl std::fmt::Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }

    fn clock() -> Arc<MockClock> {
        let mut clock = MockClock::new();
        clock.expect_now().returning(OffsetDateTime::now_utc);
        Arc::new(clock)
    }

    fn leased() -> MockJobLocks {
        let mut locks = MockJobLocks::new();
        locks.expect_try_acquire().returning(|_| {
            let mut lease = MockJobLease::new();
            lease.expect_release().times(1).return_const(());
            Ok(Some(Box::new(lease)))
        });
        locks
    }

    #[tokio::test]
    async fn a_held_lock_skips_the_run_without_running_or_recording_it() {
        let mut locks = MockJobLocks::new();
        locks.expect_try_acquire().returning(|_| Ok(None));
        let mut runs = MockJobRunStore::new();
        runs.expect_started().never();
        let runner = JobRunner::new(Arc::new(locks), Arc::new(runs), clock());
        let run =
            runner.run("job", |_| async { panic!("must not run") as Result<JobOutcome<()>, Failure> }).await.unwrap();
        assert_eq!(run, JobRun::AlreadyRunning);
    }

    #[tokio::test]
    async fn a_run_is_recorded_with_its_status_and_summary_and_releases_the_lock() {
        let mut runs = MockJobRunStore::new();
        runs.expect_started().times(1).returning(|_, _, _, _| Ok(()));
        runs.expect_finished()
            .withf(|_, status, summary, _| *status == JobStatus::Partial && summary["sent"] == 2)
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        let runner = JobRunner::new(Arc::new(leased()), Arc::new(runs), clock());
        let run = runner
            .run("job", |_| async {
                Ok::<_, Failure>(JobOutcome {
                    status: JobStatus::Partial,
                    summary: serde_json::json!({"sent": 2}),
                    result: 7,
                })
            })
            .await
            .unwrap();
        let JobRun::Ran { outcome, .. } = run else { panic!("expected a run") };
        assert_eq!(outcome.result, 7);
    }

    #[tokio::test]
    async fn a_failing_body_is_recorded_as_failed_and_its_error_returned() {
        let mut runs = MockJobRunStore::new();
        runs.expect_started().returning(|_, _, _, _| Ok(()));
        runs.expect_finished()
            .withf(|_, status, _, _| *status == JobStatus::Failed)
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        let runner = JobRunner::new(Arc::new(leased()), Arc::new(runs), clock());
        let error =
            runner.run("job", |_| async { Err::<JobOutcome<()>, _>(Failure("boom".into())) }).await.unwrap_err();
        assert_eq!(error, Failure("boom".into()));
    }
}
