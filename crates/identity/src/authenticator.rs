use std::sync::Arc;

use opsd_core::{Caller, StoreError};

use crate::ports::{MembershipStore, SignInOutcome};
use crate::sign_in_cache::SignInCache;
use crate::token::{TokenError, TokenVerifier};

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("invalid token: {0}")]
    InvalidToken(#[from] TokenError),
    #[error("the user was deleted")]
    UserDeleted,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Turns a session token into the request's caller, recording the membership it asserts: the token
/// is authoritative for the caller's current team and role. The sign-in's outcome is remembered
/// until a change to it is announced ([`SignInCache`]).
#[derive(derive_new::new)]
pub struct Authenticator {
    verifier: TokenVerifier,
    memberships: Arc<dyn MembershipStore>,
    sign_ins: Arc<SignInCache>,
}

impl Authenticator {
    pub async fn authenticate(&self, token: &str) -> Result<Caller, AuthError> {
        let verified = self.verifier.verify(token).await?;
        let outcome = match self.sign_ins.get(&verified.user_id, verified.membership.as_ref(), verified.issued_at) {
            Ok(outcome) => outcome,
            Err(lookup) => {
                let outcome = self
                    .memberships
                    .record_sign_in(&verified.user_id, verified.membership.clone(), verified.issued_at)
                    .await?;
                self.sign_ins.remember(lookup, outcome);
                outcome
            }
        };
        match outcome {
            SignInOutcome::Active => Ok(Caller { user_id: verified.user_id, membership: verified.membership }),
            SignInOutcome::MembershipRevoked => Ok(Caller { user_id: verified.user_id, membership: None }),
            SignInOutcome::Deleted => Err(AuthError::UserDeleted),
        }
    }
}

#[cfg(test)]
mod tests {
    use mockall::Sequence;
    use mockall::predicate::always;
    use opsd_core::{Role, UserId};

    use super::*;
    use crate::ports::MockMembershipStore;

    fn token(user: &str) -> String {
        crate::test_tokens::signed(user, "member", 600)
    }

    fn authenticator(store: MockMembershipStore, sign_ins: Arc<SignInCache>) -> Authenticator {
        Authenticator::new(crate::test_tokens::verifier(), Arc::new(store), sign_ins)
    }

    fn listening() -> Arc<SignInCache> {
        let cache = Arc::new(SignInCache::default());
        cache.set_listening(true);
        cache
    }

    #[tokio::test]
    async fn a_sign_in_is_recorded_once_until_the_user_is_forgotten() {
        let mut store = MockMembershipStore::new();
        store
            .expect_record_sign_in()
            .with(always(), always(), always())
            .times(2)
            .returning(|_, _, _| Ok(SignInOutcome::Active));
        let sign_ins = listening();
        let auth = authenticator(store, sign_ins.clone());
        let token = token("user_1");
        for _ in 0..3 {
            let caller = auth.authenticate(&token).await.unwrap();
            assert_eq!(caller.membership.map(|m| m.role), Some(Role::Member));
        }
        sign_ins.forget(&UserId::new("user_1"));
        auth.authenticate(&token).await.unwrap();
        auth.authenticate(&token).await.unwrap();
    }

    #[tokio::test]
    async fn a_remembered_deletion_still_refuses() {
        let mut store = MockMembershipStore::new();
        store.expect_record_sign_in().times(1).returning(|_, _, _| Ok(SignInOutcome::Deleted));
        let auth = authenticator(store, listening());
        let token = token("user_1");
        for _ in 0..2 {
            assert!(matches!(auth.authenticate(&token).await, Err(AuthError::UserDeleted)));
        }
    }

    #[tokio::test]
    async fn every_request_asks_the_database_while_nobody_listens_for_changes() {
        let mut store = MockMembershipStore::new();
        store.expect_record_sign_in().times(3).returning(|_, _, _| Ok(SignInOutcome::Active));
        let auth = authenticator(store, Arc::new(SignInCache::default()));
        let token = token("user_1");
        for _ in 0..3 {
            auth.authenticate(&token).await.unwrap();
        }
    }

    #[tokio::test]
    async fn an_outcome_read_while_a_change_is_announced_is_not_remembered() {
        let sign_ins = listening();
        let mut store = MockMembershipStore::new();
        let during = sign_ins.clone();
        let mut order = Sequence::new();
        // The removal is announced while the first sign-in is being read.
        store.expect_record_sign_in().times(1).in_sequence(&mut order).returning(move |user, _, _| {
            during.forget(user);
            Ok(SignInOutcome::Active)
        });
        store
            .expect_record_sign_in()
            .times(1)
            .in_sequence(&mut order)
            .returning(|_, _, _| Ok(SignInOutcome::MembershipRevoked));
        let auth = authenticator(store, sign_ins);
        let token = token("user_1");
        assert!(auth.authenticate(&token).await.unwrap().membership.is_some());
        assert_eq!(auth.authenticate(&token).await.unwrap().membership, None);
        assert_eq!(auth.authenticate(&token).await.unwrap().membership, None, "the revocation is remembered");
    }

    #[tokio::test]
    async fn a_failed_sign_in_is_not_remembered() {
        let mut store = MockMembershipStore::new();
        let mut order = Sequence::new();
        store
            .expect_record_sign_in()
            .times(1)
            .in_sequence(&mut order)
            .returning(|_, _, _| Err(StoreError::Unavailable("down".into())));
        store.expect_record_sign_in().times(1).in_sequence(&mut order).returning(|_, _, _| Ok(SignInOutcome::Active));
        let auth = authenticator(store, listening());
        let token = token("user_1");
        assert!(matches!(auth.authenticate(&token).await, Err(AuthError::Store(_))));
        auth.authenticate(&token).await.unwrap();
        auth.authenticate(&token).await.unwrap();
    }
}
