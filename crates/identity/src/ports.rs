use async_trait::async_trait;
use jsonwebtoken::jwk::JwkSet;
use opsd_core::{StoreError, TeamMembership, UserId};

/// Fetches the identity provider's published signing keys.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JwksFetcher: Send + Sync {
    async fn fetch(&self) -> Result<JwkSet, StoreError>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInOutcome {
    Active,
    /// The provider deleted this user: its tokens no longer open anything.
    Deleted,
}

/// Records what a verified token says: the user exists and holds this role in its current team.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait MembershipStore: Send + Sync {
    async fn record_sign_in(
        &self,
        user: &UserId,
        membership: Option<TeamMembership>,
    ) -> Result<SignInOutcome, StoreError>;
}
