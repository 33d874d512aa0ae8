use std::sync::Arc;

use opsd_core::{Caller, StoreError};

use crate::ports::{MembershipStore, SignInOutcome};
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
/// is authoritative for the caller's current team and role.
#[derive(derive_new::new)]
pub struct Authenticator {
    verifier: TokenVerifier,
    memberships: Arc<dyn MembershipStore>,
}

impl Authenticator {
    pub async fn authenticate(&self, token: &str) -> Result<Caller, AuthError> {
        let verified = self.verifier.verify(token).await?;
        match self
            .memberships
            .record_sign_in(&verified.user_id, verified.membership.clone(), verified.issued_at)
            .await?
        {
            SignInOutcome::Active => Ok(Caller { user_id: verified.user_id, membership: verified.membership }),
            SignInOutcome::MembershipRevoked => Ok(Caller { user_id: verified.user_id, membership: None }),
            SignInOutcome::Deleted => Err(AuthError::UserDeleted),
        }
    }
}
