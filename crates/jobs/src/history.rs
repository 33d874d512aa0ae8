//! What the operators' console shows of the jobs: each one's last run and how the last day went.

use async_trait::async_trait;
use opsd_core::StoreError;
use time::OffsetDateTime;

/// A job's most recent run.
#[derive(Debug, Clone, PartialEq)]
pub struct LastRun {
    /// `running`, `ok`, `partial`, `failed`, `skipped`, `disabled` or `abandoned`.
    pub status: String,
    pub started_at: OffsetDateTime,
    pub finished_at: Option<OffsetDateTime>,
    pub summary: serde_json::Value,
}

/// One job's recent activity.
#[derive(Debug, Clone, PartialEq)]
pub struct JobActivity {
    pub job: String,
    pub last: Option<LastRun>,
    /// Runs started since the window began.
    pub runs: i64,
    /// Of those, the ones that failed or were abandoned.
    pub failures: i64,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobHistory: Send + Sync {
    /// Each of `jobs`, with its last run (if any) and its counts since `since`.
    async fn activity(&self, jobs: &[String], since: OffsetDateTime) -> Result<Vec<JobActivity>, StoreError>;
}
