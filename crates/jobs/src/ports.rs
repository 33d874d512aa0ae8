use async_trait::async_trait;
use opsd_core::StoreError;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::runner::JobStatus;

/// Held while a job runs; only one lease per job exists across all instances.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobLease: Send {
    async fn release(self: Box<Self>);
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobLocks: Send + Sync {
    /// `None` when another run of the job holds the lock.
    async fn try_acquire(&self, job: &str) -> Result<Option<Box<dyn JobLease>>, StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobRunStore: Send + Sync {
    /// Records a run as `running`. The caller holds the job's lock, so any other run of the job
    /// still `running` lost its instance: it is marked `abandoned`.
    async fn started(&self, run: Uuid, job: &str, correlation: Uuid, at: OffsetDateTime) -> Result<(), StoreError>;
    async fn finished(
        &self,
        run: Uuid,
        status: JobStatus,
        summary: serde_json::Value,
        at: OffsetDateTime,
    ) -> Result<(), StoreError>;
}
