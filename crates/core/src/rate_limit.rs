use async_trait::async_trait;
use time::OffsetDateTime;

use crate::StoreError;

/// Where a caller stands against a rate limit after a call: `limit` calls per `window_seconds`,
/// `remaining` of them left, and the whole quota back in `reset_seconds`. What the RateLimit
/// header fields tell a client on every answer of a limited route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// The policy's name, as the header fields name it.
    pub policy: &'static str,
    pub limit: u32,
    pub window_seconds: u32,
    pub remaining: u32,
    pub reset_seconds: u64,
}

impl Quota {
    /// Where a key stands against `policy`: `remaining` of its calls a minute left.
    pub fn per_minute(policy: RatePolicy, remaining: u32, reset_seconds: u64) -> Self {
        Self {
            policy: policy.name,
            limit: policy.per_minute,
            window_seconds: RATE_LIMIT_WINDOW_SECONDS,
            remaining,
            reset_seconds,
        }
    }
}

/// A call refused by a rate limit, and when the next one would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimited {
    pub retry_after_seconds: u64,
    pub quota: Quota,
}

/// A limited call's outcome with where the caller stands after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Limited<T> {
    pub value: T,
    pub quota: Quota,
}

/// A named limit of calls a minute per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatePolicy {
    /// As the RateLimit header fields name it.
    pub name: &'static str,
    pub per_minute: u32,
}

/// A call counted (where the key stands now) or refused (and when the next would pass).
pub type Admission = Result<Quota, RateLimited>;

/// The window every limit counts over.
pub const RATE_LIMIT_WINDOW_SECONDS: u32 = 60;

/// Counts calls per key across all instances, over a sliding window of the last minute: a key
/// gets at most `limit` calls in any 60 seconds (a fixed window would let twice that through
/// across its edge).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Counts one call of `policy` for `key`, or refuses it when the key made the policy's calls
    /// a minute in the 60 s before `now`; either way says where the key stands.
    async fn hit(&self, policy: RatePolicy, key: &str, now: OffsetDateTime) -> Result<Admission, StoreError>;
}
