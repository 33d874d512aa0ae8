use async_trait::async_trait;
use opsd_core::{StoreError, TeamId, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{StoredSubscription, Subscription};

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait SubscriptionStore: Send + Sync {
    /// Creates or updates the subscription of this endpoint for the user. An endpoint held by
    /// another user moves to this one: the browser that holds it is signed in as this user now.
    async fn upsert(&self, user: &UserId, subscription: &Subscription, at: OffsetDateTime) -> Result<(), StoreError>;
    /// Removes only this user's subscription of the endpoint; `false` when there is none.
    async fn delete(&self, user: &UserId, endpoint: &str) -> Result<bool, StoreError>;
    /// Deletes the user's subscriptions past their expiration time; returns how many.
    async fn delete_expired(&self, user: &UserId, now: OffsetDateTime) -> Result<u32, StoreError>;
    async fn of_user(&self, user: &UserId) -> Result<Vec<StoredSubscription>, StoreError>;
    async fn delete_by_id(&self, id: Uuid) -> Result<(), StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait MemberDirectory: Send + Sync {
    async fn is_member(&self, team: &TeamId, user: &UserId) -> Result<bool, StoreError>;
    /// The team's admins who are not deleted.
    async fn admins(&self, team: &TeamId) -> Result<Vec<UserId>, StoreError>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryResult {
    /// The push service accepted it (2xx): not proof that a browser showed it.
    Accepted,
    /// 404 or 410: the subscription is gone for good.
    Gone,
    /// Anything else: counted as failed, the subscription kept.
    Failed(String),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PushSender: Send + Sync {
    fn is_configured(&self) -> bool;
    async fn deliver(&self, subscription: &Subscription, payload: &[u8]) -> DeliveryResult;
}

pub use opsd_core::{RateLimited, RateLimiter};
