use async_trait::async_trait;
use time::OffsetDateTime;

use crate::StoreError;

/// A call refused by a rate limit, and when the next one would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimited {
    pub retry_after_seconds: u64,
}

/// Counts calls per key across all instances, over a sliding window of the last minute: a key
/// gets at most `limit` calls in any 60 seconds (a fixed window would let twice that through
/// across its edge).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Counts one call, or refuses it when the key made `limit` calls in the 60 s before `now`.
    async fn hit(&self, key: &str, limit: u32, now: OffsetDateTime) -> Result<Result<(), RateLimited>, StoreError>;
}
