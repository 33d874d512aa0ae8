//! Idempotent retries of requests that create something, as Stripe's API and the IETF httpapi
//! `Idempotency-Key` draft have them: the first answer to a key is kept with a fingerprint of its
//! request; the same key and request get that answer again; the same key with another request is
//! refused; a request still running under the key is refused until it has its answer.
//!
//! Keys belong to a caller (a user, or an API key): one caller's key never answers another.

use std::time::Duration;

use async_trait::async_trait;
use opsd_core::StoreError;
use sha2::{Digest, Sha256};

/// How long a claimed key is held for the request that claimed it. A key still unanswered after it
/// (its instance died, or lost the database, between the request's effect and keeping its answer)
/// is never run again: whether the request took effect is unknown, and running it twice could do
/// it twice.
pub const LEASE: Duration = Duration::from_secs(60);

/// How long answers are kept (at least): the prune job deletes older ones.
pub const RETENTION: Duration = Duration::from_secs(24 * 3600);

/// An `Idempotency-Key` header's value: 1 to 255 visible ASCII characters (a UUID, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("Idempotency-Key must be 1 to 255 visible ASCII characters")]
pub struct MalformedKey;

impl IdempotencyKey {
    pub fn parse(raw: &str) -> Result<Self, MalformedKey> {
        let fits = (1..=255).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_graphic());
        if fits { Ok(Self(raw.to_owned())) } else { Err(MalformedKey) }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whose key it is: `user:<id>` or `key:<digest of the API key>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyScope(String);

impl KeyScope {
    pub fn user(id: &str) -> Self {
        Self(format!("user:{id}"))
    }

    /// An API key is never stored: its SHA-256, in hex, stands for it.
    pub fn api_key(secret: &str) -> Self {
        Self(format!("key:{}", hex(&Sha256::digest(secret.as_bytes()))))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// SHA-256 of the request's method, path and query, and body: what "the same request" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    pub fn of(method: &str, path_and_query: &str, body: &[u8]) -> Self {
        let mut hash = Sha256::new();
        for part in [method.as_bytes(), path_and_query.as_bytes()] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part);
        }
        hash.update(body);
        Self(hash.finalize().into())
    }
}

/// An answer as it is kept and replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub body: Vec<u8>,
}

/// What a request under a key may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is new: run the request, then [`Idempotency::finish`].
    Run,
    /// The key already has its answer, for this same request.
    Replay(StoredAnswer),
    /// The key was used for another request.
    Mismatch,
    /// A request under the key is still running.
    InProgress,
    /// The request under the key stopped without an answer being kept: it may or may not have
    /// taken effect. The client looks, then uses a new key.
    OutcomeUnknown,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Takes a new key for `lease`; for a known one, says what the request may do.
    async fn claim(
        &self,
        scope: &KeyScope,
        key: &IdempotencyKey,
        fingerprint: &Fingerprint,
        lease: Duration,
    ) -> Result<Claim, StoreError>;
    /// Keeps the answer of the request that claimed the key.
    async fn complete(&self, scope: &KeyScope, key: &IdempotencyKey, answer: &StoredAnswer) -> Result<(), StoreError>;
    /// Lets the key go unanswered, so a retry runs the request again.
    async fn release(&self, scope: &KeyScope, key: &IdempotencyKey) -> Result<(), StoreError>;
    /// Deletes keys created more than `age` ago; answers how many.
    async fn prune(&self, age: Duration) -> Result<u64, StoreError>;
}

pub struct Idempotency {
    store: std::sync::Arc<dyn IdempotencyStore>,
}

impl Idempotency {
    pub fn new(store: std::sync::Arc<dyn IdempotencyStore>) -> Self {
        Self { store }
    }

    pub async fn begin(
        &self,
        scope: &KeyScope,
        key: &IdempotencyKey,
        fingerprint: &Fingerprint,
    ) -> Result<Claim, StoreError> {
        self.store.claim(scope, key, fingerprint, LEASE).await
    }

    /// Keeps the answer, whatever it is (as Stripe does): a 5xx may come after the request took
    /// effect (a commit whose acknowledgement was lost, a push sent before a later step failed), so
    /// running it again on a retry could do it twice. Only a 429 lets the key go: a rate limit is
    /// checked before a request does anything.
    pub async fn finish(
        &self,
        scope: &KeyScope,
        key: &IdempotencyKey,
        answer: &StoredAnswer,
    ) -> Result<(), StoreError> {
        if answer.status == 429 {
            self.store.release(scope, key).await
        } else {
            self.store.complete(scope, key, answer).await
        }
    }

    pub async fn prune(&self) -> Result<u64, StoreError> {
        self.store.prune(RETENTION).await
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mockall::predicate::eq;

    use super::*;

    fn answer(status: u16) -> StoredAnswer {
        StoredAnswer { status, content_type: Some("application/json".into()), location: None, body: b"{}".to_vec() }
    }

    #[test]
    fn keys_are_visible_ascii_of_at_most_255() {
        assert!(IdempotencyKey::parse("7d0c7a0e-5f3c-4a52-9a3d-2d1f0c6e8b11").is_ok());
        assert_eq!(IdempotencyKey::parse(""), Err(MalformedKey));
        assert_eq!(IdempotencyKey::parse("has space"), Err(MalformedKey));
        assert_eq!(IdempotencyKey::parse("é"), Err(MalformedKey));
        assert_eq!(IdempotencyKey::parse(&"k".repeat(256)), Err(MalformedKey));
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
    }

    #[test]
    fn a_fingerprint_tells_requests_apart_by_method_target_and_body() {
        let base = Fingerprint::of("POST", "/api/incidents", b"{\"a\":1}");
        assert_eq!(base, Fingerprint::of("POST", "/api/incidents", b"{\"a\":1}"));
        assert_ne!(base, Fingerprint::of("POST", "/api/incidents", b"{\"a\":2}"));
        assert_ne!(base, Fingerprint::of("POST", "/api/contacts", b"{\"a\":1}"));
        // The parts are length-prefixed: moving bytes between them changes the fingerprint.
        assert_ne!(Fingerprint::of("POST", "/a", b"b"), Fingerprint::of("POST", "/ab", b""));
    }

    #[test]
    fn scopes_separate_users_from_keys_and_never_hold_a_secret() {
        assert_ne!(KeyScope::user("u1"), KeyScope::user("u2"));
        let scope = KeyScope::api_key("secret-key");
        assert!(!scope.as_str().contains("secret"));
        assert_eq!(scope, KeyScope::api_key("secret-key"));
        assert_ne!(scope, KeyScope::api_key("other-key"));
    }

    #[tokio::test]
    async fn every_answer_is_kept_but_a_rate_limit_releases_the_key() {
        let (scope, key) = (KeyScope::user("u1"), IdempotencyKey::parse("k1").unwrap());
        let mut store = MockIdempotencyStore::new();
        store
            .expect_complete()
            .with(eq(scope.clone()), eq(key.clone()), eq(answer(201)))
            .times(1)
            .returning(|_, _, _| Ok(()));
        store
            .expect_complete()
            .with(eq(scope.clone()), eq(key.clone()), eq(answer(422)))
            .times(1)
            .returning(|_, _, _| Ok(()));
        for status in [500, 503] {
            store
                .expect_complete()
                .with(eq(scope.clone()), eq(key.clone()), eq(answer(status)))
                .times(1)
                .returning(|_, _, _| Ok(()));
        }
        store.expect_release().with(eq(scope.clone()), eq(key.clone())).times(1).returning(|_, _| Ok(()));
        let service = Idempotency::new(Arc::new(store));
        for status in [201, 422, 500, 503, 429] {
            service.finish(&scope, &key, &answer(status)).await.unwrap();
        }
    }

    #[tokio::test]
    async fn begin_claims_with_the_lease_and_prune_keeps_a_day() {
        let mut store = MockIdempotencyStore::new();
        store.expect_claim().withf(|_, _, _, lease| *lease == LEASE).returning(|_, _, _, _| Ok(Claim::InProgress));
        store.expect_prune().with(eq(RETENTION)).returning(|_| Ok(3));
        let service = Idempotency::new(Arc::new(store));
        let fingerprint = Fingerprint::of("POST", "/x", b"");
        let claim = service.begin(&KeyScope::user("u"), &IdempotencyKey::parse("k").unwrap(), &fingerprint).await;
        assert_eq!(claim.unwrap(), Claim::InProgress);
        assert_eq!(service.prune().await.unwrap(), 3);
    }
}
