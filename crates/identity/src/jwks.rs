use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::JwkSet;
use opsd_core::Clock;
use time::{Duration, OffsetDateTime};
use tokio::sync::Mutex;

use crate::ports::JwksFetcher;
use crate::token::TokenError;

/// An unknown `kid` may trigger a refetch at most this often, so garbage tokens can't hammer the
/// provider.
const REFETCH_INTERVAL: Duration = Duration::minutes(1);
/// The first wait after a failed fetch; it doubles with each failure in a row, up to the cap.
const FIRST_BACKOFF: Duration = Duration::seconds(5);
const MAX_BACKOFF: Duration = Duration::minutes(5);

/// How long fetched keys are fresh, and how long past that they still verify while refreshes fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JwksPolicy {
    /// `IDENTITY_JWKS_REFRESH_SECONDS`, default 3600.
    pub refresh_after: Duration,
    /// `IDENTITY_JWKS_MAX_STALE_SECONDS`, default 86400.
    pub max_stale: Duration,
}

impl Default for JwksPolicy {
    fn default() -> Self {
        Self { refresh_after: Duration::hours(1), max_stale: Duration::days(1) }
    }
}

#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, DecodingKey>,
    fetched_at: Option<OffsetDateTime>,
    last_attempt: Option<OffsetDateTime>,
    /// Failed fetches in a row; each doubles the wait before the next attempt.
    failures: u32,
}

/// The provider's signing keys by `kid`: cached, refreshed in the background once stale
/// (stale-while-revalidate: a request holding usable keys never waits for a fetch, and stale keys
/// keep verifying while refreshes fail, up to `max_stale`), refetched on an unknown `kid` at most
/// once a minute, with at most one fetch in flight and failed fetches backing off.
pub struct JwksCache {
    fetcher: Arc<dyn JwksFetcher>,
    clock: Arc<dyn Clock>,
    policy: JwksPolicy,
    keys: RwLock<Keys>,
    /// Held by the one fetch in flight.
    fetching: Mutex<()>,
}

impl JwksCache {
    pub fn new(fetcher: Arc<dyn JwksFetcher>, clock: Arc<dyn Clock>, policy: JwksPolicy) -> Self {
        Self { fetcher, clock, policy, keys: RwLock::new(Keys::default()), fetching: Mutex::new(()) }
    }

    pub(crate) async fn key(self: &Arc<Self>, kid: Option<&str>) -> Result<DecodingKey, TokenError> {
        if let Some((key, stale)) = self.cached(kid) {
            if stale && self.attempt_due(Duration::ZERO) {
                let cache = Arc::clone(self);
                tokio::spawn(async move { cache.refresh_in_background().await });
            }
            return Ok(key);
        }
        let _single_flight = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some((key, _)) = self.cached(kid) {
            return Ok(key);
        }
        if !self.attempt_due(REFETCH_INTERVAL) {
            return Err(if self.has_usable_keys() { TokenError::UnknownKey } else { TokenError::KeysUnavailable });
        }
        self.fetch().await?;
        self.cached(kid).map(|(key, _)| key).ok_or(TokenError::UnknownKey)
    }

    async fn refresh_in_background(&self) {
        // A fetch already in flight will do.
        let Ok(_single_flight) = self.fetching.try_lock() else { return };
        if self.attempt_due(Duration::ZERO) {
            let _ = self.fetch().await;
        }
    }

    async fn fetch(&self) -> Result<(), TokenError> {
        self.write().last_attempt = Some(self.clock.now());
        match self.fetcher.fetch().await {
            Ok(set) => {
                self.store(&set);
                Ok(())
            }
            Err(error) => {
                let failures = {
                    let mut keys = self.write();
                    keys.failures = keys.failures.saturating_add(1);
                    keys.failures
                };
                tracing::warn!(%error, failures, "fetching the identity provider's JWKS failed; cached keys stay in use");
                Err(TokenError::KeysUnavailable)
            }
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Keys> {
        self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Keys> {
        self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The key, and whether it is past its refresh time; `None` when unknown or too old to use.
    fn cached(&self, kid: Option<&str>) -> Option<(DecodingKey, bool)> {
        let keys = self.read();
        let age = self.clock.now() - keys.fetched_at?;
        if age >= self.policy.refresh_after + self.policy.max_stale {
            return None;
        }
        let key = match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            // A token without `kid` is accepted only when the set holds exactly one key.
            None if keys.by_kid.len() == 1 => keys.by_kid.values().next().cloned(),
            None => None,
        }?;
        Some((key, age >= self.policy.refresh_after))
    }

    fn has_usable_keys(&self) -> bool {
        let keys = self.read();
        keys.fetched_at.is_some_and(|at| self.clock.now() - at < self.policy.refresh_after + self.policy.max_stale)
    }

    /// Whether a fetch may go now: at least `interval` after the last attempt, and past the
    /// backoff of failed ones.
    fn attempt_due(&self, interval: Duration) -> bool {
        let keys = self.read();
        let Some(last) = keys.last_attempt else { return true };
        let backoff = match keys.failures {
            0 => Duration::ZERO,
            n => (FIRST_BACKOFF * 2i32.saturating_pow(n.min(16) - 1)).min(MAX_BACKOFF),
        };
        self.clock.now() - last >= interval.max(backoff)
    }

    fn store(&self, set: &JwkSet) {
        let by_kid = set
            .keys
            .iter()
            .filter_map(|jwk| {
                let kid = jwk.common.key_id.clone()?;
                DecodingKey::from_jwk(jwk).ok().map(|key| (kid, key))
            })
            .collect();
        let now = self.clock.now();
        *self.write() = Keys { by_kid, fetched_at: Some(now), last_attempt: Some(now), failures: 0 };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use opsd_core::{MockClock, StoreError};

    use super::*;
    use crate::ports::MockJwksFetcher;

    const JWKS: &str = r#"{"keys":[{"kty":"RSA","kid":"k1","alg":"RS256","use":"sig","n":"sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw","e":"AQAB"}]}"#;

    fn clock_at(seconds: Arc<AtomicI64>) -> Arc<dyn Clock> {
        let mut clock = MockClock::new();
        clock
            .expect_now()
            .returning(move || OffsetDateTime::from_unix_timestamp(seconds.load(Ordering::SeqCst)).unwrap());
        Arc::new(clock)
    }

    #[tokio::test]
    async fn fetches_once_and_serves_known_kids_from_the_cache() {
        let mut fetcher = MockJwksFetcher::new();
        fetcher.expect_fetch().times(1).returning(|| Ok(serde_json::from_str(JWKS).unwrap()));
        let cache = Arc::new(JwksCache::new(
            Arc::new(fetcher),
            clock_at(Arc::new(AtomicI64::new(1_000_000))),
            JwksPolicy::default(),
        ));
        assert!(cache.key(Some("k1")).await.is_ok());
        assert!(cache.key(Some("k1")).await.is_ok());
        assert!(cache.key(None).await.is_ok(), "a single key serves a token without kid");
    }

    #[tokio::test]
    async fn an_unknown_kid_refetches_at_most_once_a_minute() {
        let now = Arc::new(AtomicI64::new(1_000_000));
        let mut fetcher = MockJwksFetcher::new();
        fetcher.expect_fetch().times(2).returning(|| Ok(serde_json::from_str(JWKS).unwrap()));
        let cache = Arc::new(JwksCache::new(Arc::new(fetcher), clock_at(now.clone()), JwksPolicy::default()));
        assert_eq!(cache.key(Some("k2")).await.err(), Some(TokenError::UnknownKey));
        now.fetch_add(30, Ordering::SeqCst);
        assert_eq!(cache.key(Some("k2")).await.err(), Some(TokenError::UnknownKey));
        now.fetch_add(31, Ordering::SeqCst);
        assert_eq!(cache.key(Some("k2")).await.err(), Some(TokenError::UnknownKey));
    }

    #[tokio::test]
    async fn a_failing_provider_reports_unavailable_keys() {
        let mut fetcher = MockJwksFetcher::new();
        fetcher.expect_fetch().times(1).returning(|| Err(StoreError::Unavailable("down".into())));
        let cache = Arc::new(JwksCache::new(
            Arc::new(fetcher),
            clock_at(Arc::new(AtomicI64::new(1_000_000))),
            JwksPolicy::default(),
        ));
        assert_eq!(cache.key(Some("k1")).await.err(), Some(TokenError::KeysUnavailable));
        assert_eq!(
            cache.key(Some("k1")).await.err(),
            Some(TokenError::KeysUnavailable),
            "backing off: no second fetch"
        );
    }

    #[tokio::test]
    async fn stale_keys_keep_verifying_while_refreshes_fail_and_failed_fetches_back_off() {
        let now = Arc::new(AtomicI64::new(1_000_000));
        let calls = Arc::new(AtomicI64::new(0));
        let seen = calls.clone();
        let mut fetcher = MockJwksFetcher::new();
        fetcher.expect_fetch().returning(move || {
            if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                Ok(serde_json::from_str(JWKS).unwrap())
            } else {
                Err(StoreError::Unavailable("down".into()))
            }
        });
        let policy = JwksPolicy { refresh_after: Duration::seconds(60), max_stale: Duration::seconds(600) };
        let cache = Arc::new(JwksCache::new(Arc::new(fetcher), clock_at(now.clone()), policy));
        assert!(cache.key(Some("k1")).await.is_ok());
        now.fetch_add(61, Ordering::SeqCst);
        // Stale: served at once, a background refresh is started (and fails).
        for _ in 0..50 {
            assert!(cache.key(Some("k1")).await.is_ok(), "stale keys still verify");
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2, "one refresh, then backoff: not one per request");
        now.fetch_add(5, Ordering::SeqCst);
        assert!(cache.key(Some("k1")).await.is_ok());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 3, "after the first 5 s of backoff, one more try");
        now.fetch_add(5, Ordering::SeqCst);
        assert!(cache.key(Some("k1")).await.is_ok());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 3, "the backoff doubled to 10 s");
        now.fetch_add(600, Ordering::SeqCst);
        assert!(cache.key(Some("k1")).await.is_err(), "past max_stale the keys are no longer used");
    }
}
