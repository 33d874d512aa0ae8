use async_trait::async_trait;
use opsd_core::StoreError;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::runner::{JobOutcome, JobRun, JobRunner, JobStatus};

/// How a job answers the scheduler: a line of text (the specification's first four jobs) or a JSON
/// document (every other one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerFormat {
    Text,
    Json,
}

/// What one run of a job produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub status: JobStatus,
    /// Kept with the run's record.
    pub summary: Value,
    /// The answer's body: a JSON string for a text job, a document for a JSON job.
    pub answer: Value,
    /// `false` when the run raised its health gate: the answer is then a 500.
    pub healthy: bool,
}

impl Finished {
    /// A healthy run whose answer is `answer`.
    pub fn new(status: JobStatus, summary: Value, answer: Value) -> Self {
        Self { status, summary, answer, healthy: true }
    }
}

/// A scheduled job: its name (its path under `/cron/` and its lock), when the external scheduler
/// calls it, how it answers, and its body. The runner owns locking, records and the answers for
/// runs that did not happen.
#[async_trait]
pub trait Job: Send + Sync {
    fn name(&self) -> &'static str;
    /// A UTC cron expression.
    fn schedule(&self) -> &'static str;
    fn format(&self) -> AnswerFormat;
    /// What it does, in one line (the job table of docs/configuration.md).
    fn description(&self) -> &'static str;
    /// `false` while the job is off (credentials missing, not admitted): it answers `disabled`.
    fn enabled(&self) -> bool {
        true
    }
    async fn run(&self, correlation: Uuid) -> Result<Finished, StoreError>;
}

/// A call's answer, decided here for every job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobAnswer {
    Text(String),
    Json { body: Value, healthy: bool },
}

impl JobRunner {
    /// Calls a job: `disabled` while it is off, `skipped` while another run holds its lock,
    /// otherwise its run's answer; with the status it ended in.
    pub async fn call(&self, job: &dyn Job) -> Result<(JobStatus, JobAnswer), StoreError> {
        let format = job.format();
        if !job.enabled() {
            return Ok((JobStatus::Disabled, answer(format, "disabled", json!({ "status": "disabled" }))));
        }
        let run = self
            .run(job.name(), |correlation| async move {
                let finished = job.run(correlation).await?;
                Ok::<_, StoreError>(JobOutcome {
                    status: finished.status,
                    summary: finished.summary.clone(),
                    result: finished,
                })
            })
            .await?;
        Ok(match run {
            JobRun::AlreadyRunning => {
                (JobStatus::Skipped, answer(format, "skipped: already running", json!({ "status": "skipped" })))
            }
            JobRun::Ran { outcome, .. } => (
                outcome.status,
                match format {
                    AnswerFormat::Text => {
                        JobAnswer::Text(outcome.result.answer.as_str().unwrap_or_default().to_owned())
                    }
                    AnswerFormat::Json => {
                        JobAnswer::Json { body: outcome.result.answer, healthy: outcome.result.healthy }
                    }
                },
            ),
        })
    }
}

fn answer(format: AnswerFormat, text: &str, json: Value) -> JobAnswer {
    match format {
        AnswerFormat::Text => JobAnswer::Text(text.to_owned()),
        AnswerFormat::Json => JobAnswer::Json { body: json, healthy: true },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use opsd_core::MockClock;
    use time::OffsetDateTime;

    use super::*;
    use crate::ports::{MockJobLease, MockJobLocks, MockJobRunStore};

    struct Counting {
        format: AnswerFormat,
        enabled: bool,
    }

    #[async_trait]
    impl Job for Counting {
        fn name(&self) -> &'static str {
            "count"
        }
        fn schedule(&self) -> &'static str {
            "* * * * *"
        }
        fn format(&self) -> AnswerFormat {
            self.format
        }
        fn description(&self) -> &'static str {
            "counts"
        }
        fn enabled(&self) -> bool {
            self.enabled
        }
        async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
            let answer = match self.format {
                AnswerFormat::Text => json!("ok: 3 counted"),
                AnswerFormat::Json => json!({ "status": "ok", "counted": 3 }),
            };
            Ok(Finished::new(JobStatus::Ok, json!({ "counted": 3 }), answer))
        }
    }

    fn runner(lock_free: bool) -> JobRunner {
        let mut locks = MockJobLocks::new();
        locks.expect_try_acquire().returning(move |_| {
            if !lock_free {
                return Ok(None);
            }
            let mut lease = MockJobLease::new();
            lease.expect_release().returning(|| ());
            Ok(Some(Box::new(lease) as Box<dyn crate::ports::JobLease>))
        });
        let mut runs = MockJobRunStore::new();
        runs.expect_started().returning(|_, _, _, _| Ok(()));
        runs.expect_finished().returning(|_, _, _, _| Ok(()));
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap());
        JobRunner::new(Arc::new(locks), Arc::new(runs), Arc::new(clock))
    }

    #[tokio::test]
    async fn every_job_answers_in_its_format_when_it_ran_was_skipped_or_is_off() {
        let text = Counting { format: AnswerFormat::Text, enabled: true };
        let json = Counting { format: AnswerFormat::Json, enabled: true };
        assert_eq!(runner(true).call(&text).await.unwrap(), (JobStatus::Ok, JobAnswer::Text("ok: 3 counted".into())));
        assert_eq!(
            runner(true).call(&json).await.unwrap(),
            (JobStatus::Ok, JobAnswer::Json { body: json!({ "status": "ok", "counted": 3 }), healthy: true })
        );
        assert_eq!(
            runner(false).call(&text).await.unwrap(),
            (JobStatus::Skipped, JobAnswer::Text("skipped: already running".into()))
        );
        assert_eq!(
            runner(false).call(&json).await.unwrap(),
            (JobStatus::Skipped, JobAnswer::Json { body: json!({ "status": "skipped" }), healthy: true })
        );
        let off = Counting { format: AnswerFormat::Json, enabled: false };
        assert_eq!(
            runner(true).call(&off).await.unwrap(),
            (JobStatus::Disabled, JobAnswer::Json { body: json!({ "status": "disabled" }), healthy: true })
        );
    }
}
