//! What every scheduled job shares: one run at a time across all instances, and a record of each run.

mod history;
mod job;
mod ports;
mod runner;

#[cfg(any(test, feature = "mock"))]
pub use history::MockJobHistory;
pub use history::{JobActivity, JobHistory, LastRun};
pub use job::{AnswerFormat, Finished, Job, JobAnswer};
pub use ports::{JobLease, JobLocks, JobRunStore};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockJobLease, MockJobLocks, MockJobRunStore};
pub use runner::{JobOutcome, JobRun, JobRunner, JobStatus};
