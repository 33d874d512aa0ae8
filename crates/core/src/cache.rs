use async_trait::async_trait;

use crate::TeamId;

/// Drops a team's cached optimization data, on every instance. Called after a committed change
/// that alters what the cache holds (sales, goals, schedules, identity events); it cannot fail
/// the change, so failures are the implementation's to log.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait TeamCacheInvalidation: Send + Sync {
    async fn invalidate_team(&self, team: &TeamId);
}
