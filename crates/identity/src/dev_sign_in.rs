//! One-time links into the console for the local dev identity (`just run`): the terminal shows a
//! random ticket once; only its SHA-256 is stored, and redeeming deletes it, so a link works once
//! and only until it expires. With a real identity provider there are no links at all.

use std::sync::Arc;

use async_trait::async_trait;
use opsd_core::{Clock, StoreError, TeamMembership, UserId};
use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};

/// Whom a link signs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevSignIn {
    pub user: UserId,
    pub membership: TeamMembership,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait DevSignInStore: Send + Sync {
    /// Keeps a link (by its ticket's digest) until `expires_at`; drops links already expired.
    async fn insert(
        &self,
        ticket_sha256: &str,
        sign_in: &DevSignIn,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// Deletes the link and returns whom it signs in, if it has not expired at `now`.
    async fn take(&self, ticket_sha256: &str, now: OffsetDateTime) -> Result<Option<DevSignIn>, StoreError>;
}

/// A ticket is 32 random bytes, base64url: anything much shorter or longer is not one of ours.
const TICKET_LENGTHS: std::ops::RangeInclusive<usize> = 40..=64;

pub struct DevSignInLinks {
    store: Arc<dyn DevSignInStore>,
    clock: Arc<dyn Clock>,
}

fn digest(ticket: &str) -> String {
    hex::encode(Sha256::digest(ticket.as_bytes()))
}

impl DevSignInLinks {
    pub fn new(store: Arc<dyn DevSignInStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Records `ticket` (made by the caller from a CSPRNG) as a link for `sign_in`, valid for `valid_for`.
    pub async fn issue(&self, ticket: &str, sign_in: &DevSignIn, valid_for: Duration) -> Result<(), StoreError> {
        assert!(TICKET_LENGTHS.contains(&ticket.len()), "a ticket is 32 random bytes");
        self.store.insert(&digest(ticket), sign_in, self.clock.now() + valid_for).await
    }

    /// Whom the link signs in, once: `None` for a ticket never issued, already used or expired.
    pub async fn redeem(&self, ticket: &str) -> Result<Option<DevSignIn>, StoreError> {
        if !TICKET_LENGTHS.contains(&ticket.len()) {
            return Ok(None);
        }
        self.store.take(&digest(ticket), self.clock.now()).await
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::eq;
    use opsd_core::{MockClock, Role, TeamId};

    use super::*;

    const TICKET: &str = "q3Jm1cV0pX8kYt2sWb9nRz4eLh7uAf6dGi5oKj0MxNw";

    fn at_noon() -> Arc<dyn Clock> {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(time::macros::datetime!(2026-11-27 12:00 UTC));
        Arc::new(clock)
    }

    fn admin() -> DevSignIn {
        DevSignIn {
            user: UserId::new("user_demo"),
            membership: TeamMembership { team_id: TeamId::new("org_demo"), role: Role::Admin },
        }
    }

    #[tokio::test]
    async fn only_the_tickets_digest_is_stored_with_its_expiry() {
        let mut store = MockDevSignInStore::new();
        store
            .expect_insert()
            .withf(|digest, sign_in, expires_at| {
                digest.len() == 64
                    && !digest.contains(TICKET)
                    && *sign_in == admin()
                    && *expires_at == time::macros::datetime!(2026-11-27 12:15 UTC)
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let links = DevSignInLinks::new(Arc::new(store), at_noon());
        links.issue(TICKET, &admin(), Duration::minutes(15)).await.unwrap();
    }

    #[tokio::test]
    async fn redeeming_takes_the_link_by_the_same_digest() {
        let mut store = MockDevSignInStore::new();
        store
            .expect_take()
            .with(eq(digest(TICKET)), eq(time::macros::datetime!(2026-11-27 12:00 UTC)))
            .times(1)
            .returning(|_, _| Ok(Some(admin())));
        let links = DevSignInLinks::new(Arc::new(store), at_noon());
        assert_eq!(links.redeem(TICKET).await.unwrap(), Some(admin()));
    }

    #[tokio::test]
    async fn a_ticket_of_the_wrong_size_is_refused_without_a_lookup() {
        let mut store = MockDevSignInStore::new();
        store.expect_take().never();
        let links = DevSignInLinks::new(Arc::new(store), at_noon());
        assert_eq!(links.redeem("").await.unwrap(), None);
        assert_eq!(links.redeem(&"a".repeat(500)).await.unwrap(), None);
    }
}
