//! Who the caller is: identity-provider session tokens, and the users and memberships they imply.

mod authenticator;
mod dev_sign_in;
mod jwks;
mod ports;
mod sign_in_cache;
#[cfg(test)]
mod test_tokens;
mod token;
mod webhook;
mod webhook_service;

pub use authenticator::{AuthError, Authenticator};
#[cfg(any(test, feature = "mock"))]
pub use dev_sign_in::MockDevSignInStore;
pub use dev_sign_in::{DevSignIn, DevSignInLinks, DevSignInStore};
pub use jwks::{JwksCache, JwksPolicy};
pub use ports::{Delivery, DeliveryOutcome, IdentityEventStore, JwksFetcher, MembershipStore, SignInOutcome};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockIdentityEventStore, MockJwksFetcher, MockMembershipStore};
pub use sign_in_cache::SignInCache;
pub use token::{KeySource, TokenError, TokenPolicy, TokenVerifier, VerifiedToken};

pub use jsonwebtoken::DecodingKey;
pub use jsonwebtoken::jwk::JwkSet;
pub use webhook::{
    EventParseError, IdentityEvent, IdentityEventDecoder, MembershipChange, UserProfile, membership_change, provider_id,
};
pub use webhook_service::{IdentityWebhookService, WebhookError};
