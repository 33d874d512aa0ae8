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
/// Keys are refreshed in the background of a request once they are this old.
const MAX_AGE: Duration = Duration::hours(1);

#[derive(Default)]
struct Keys {
    by_kid: HashMap<String, DecodingKey>,
    fetched_at: Option<OffsetDateTime>,
}

/// The provider's signing keys by `kid`, cached and refetched on an unknown `kid`.
pub struct JwksCache {
    fetcher: Arc<dyn JwksFetcher>,
    clock: Arc<dyn Clock>,
    keys: RwLock<Keys>,
    refetch: Mutex<()>,
}

impl JwksCache {
    pub fn new(fetcher: Arc<dyn JwksFetcher>, clock: Arc<dyn Clock>) -> Self {
        Self { fetcher, clock, keys: RwLock::new(Keys::default()), refetch: Mutex::new(()) }
    }

    pub(crate) async fn key(&self, kid: Option<&str>) -> Result<DecodingKey, TokenError> {
        if let Some(key) = self.cached(kid) {
            return Ok(key);
        }
        let _single_flight = self.refetch.lock().await;
        // Another request may have refetched while this one waited.
        if let Some(key) = self.cached(kid) {
            return Ok(key);
        }
        if !self.may_refetch() {
            return Err(TokenError::UnknownKey);
        }
        let set = self.fetcher.fetch().await.map_err(|error| {
            tracing::warn!(%error, "fetching the identity provider's JWKS failed");
            TokenError::KeysUnavailable
        })?;
        self.store(&set);
        self.cached(kid).ok_or(TokenError::UnknownKey)
    }

    fn cached(&self, kid: Option<&str>) -> Option<DecodingKey> {
        let keys = self.keys.read().expect("JWKS lock poisoned");
        let fresh = keys.fetched_at.is_some_and(|at| self.clock.now() - at < MAX_AGE);
        if !fresh {
            return None;
        }
        match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            // A token without `kid` is accepted only when the set holds exactly one key.
            None if keys.by_kid.len() == 1 => keys.by_kid.values().next().cloned(),
            None => None,
        }
    }

    fn may_refetch(&self) -> bool {
        let keys = self.keys.read().expect("JWKS lock poisoned");
        match keys.fetched_at {
            None => true,
            Some(at) => {
                let age = self.clock.now() - at;
                age >= REFETCH_INTERVAL || age >= MAX_AGE
            }
        }
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
        let mut keys = self.keys.write().expect("JWKS lock poisoned");
        *keys = Keys { by_kid, fetched_at: Some(self.clock.now()) };
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
        clock.expect_now().returning(move || {
            OffsetDateTime::from_unix_timestamp(seconds.load(Ordering::SeqCst)).unwrap()
        });
        Arc::new(clock)
    }

    #[tokio::test]
    async fn fetches_once_and_serves_known_kids_from_the_cache() {
        let mut fetcher = MockJwksFetcher::new();
        fetcher.expect_fetch().times(1).returning(|| Ok(serde_json::from_str(JWKS).unwrap()));
        let cache = JwksCache::new(Arc::new(fetcher), clock_at(Arc::new(AtomicI64::new(1_000_000))));
        assert!(cache.key(Some("k1")).await.is_ok());
        assert!(cache.key(Some("k1")).await.is_ok());
        assert!(cache.key(None).await.is_ok(), "a single key serves a token without kid");
    }

    #[tokio::test]
    async fn an_unknown_kid_refetches_at_most_once_a_minute() {
        let now = Arc::new(AtomicI64::new(1_000_000));
        let mut fetcher = MockJwksFetcher::new();
        fetcher.expect_fetch().times(2).returning(|| Ok(serde_json::from_str(JWKS).unwrap()));
        let cache = JwksCache::new(Arc::new(fetcher), clock_at(now.clone()));
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
        let cache = JwksCache::new(Arc::new(fetcher), clock_at(Arc::new(AtomicI64::new(1_000_000))));
        assert_eq!(cache.key(Some("k1")).await.err(), Some(TokenError::KeysUnavailable));
    }
}
