use async_trait::async_trait;
use jsonwebtoken::jwk::JwkSet;
use opsd_core::{StoreError, TeamId, TeamMembership, UserId};
use time::OffsetDateTime;

use crate::webhook::IdentityEvent;

/// Fetches the identity provider's published signing keys.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JwksFetcher: Send + Sync {
    async fn fetch(&self) -> Result<JwkSet, StoreError>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInOutcome {
    Active,
    /// The user is active, but the provider removed the token's membership after the token was
    /// issued (or deleted the team): the token opens nothing of that team.
    MembershipRevoked,
    /// The provider deleted this user: its tokens no longer open anything.
    Deleted,
}

/// Records what a verified token says: the user exists and holds this role in its current team,
/// unless the provider removed that membership after `issued_at` (unix seconds; a token without
/// `iat` cannot restore a removed membership).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait MembershipStore: Send + Sync {
    async fn record_sign_in(
        &self,
        user: &UserId,
        membership: Option<TeamMembership>,
        issued_at: Option<i64>,
    ) -> Result<SignInOutcome, StoreError>;
}

/// One verified delivery: the provider's delivery id and the SHA-256 of its raw body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: String,
    pub body_sha256: String,
    pub event_type: String,
    pub received_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// Recorded and applied; these teams' derived data changed.
    Applied { teams: Vec<TeamId> },
    /// The same id and body arrived before: nothing was done again.
    Duplicate,
    /// The same id arrived before with another body.
    Conflict,
}

/// Records a delivery and applies its event in one transaction: both happen, or neither.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait IdentityEventStore: Send + Sync {
    async fn record_and_apply(&self, delivery: &Delivery, event: &IdentityEvent)
    -> Result<DeliveryOutcome, StoreError>;
}
