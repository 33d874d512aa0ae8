//! A local push service that checks what a real one checks: the VAPID JWT (ES256, verified with
//! the server's public key, `aud` the endpoint's origin, `exp` within 24 hours, a `sub`), the
//! headers, and a body that decrypts with the subscriber's private key. Each endpoint answers the
//! status it was given.

use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The test server's VAPID key pair (made with `opsd vapid-keys`; it protects nothing).
pub const VAPID_PUBLIC_KEY: &str =
    "BPbVjnR8XXLF3b3zXhbiVApAN4Yj0sSzJDbpXqkMc-cpG0p0i7qpxWhAN1tYbiF8upyNyJG5w677_bxadPr0DBo";
pub const VAPID_PRIVATE_KEY: &str = "Metf-eW5YoWhDYhfIgefGxo9kc8b52_ARcWKRhOmiac";

/// A browser's subscription: what it sends to `/api/push/subscribe`.
pub struct FakeSubscriber {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

/// A push the fake accepted as well formed, decrypted.
#[derive(Debug, Clone)]
pub struct Delivered {
    pub endpoint: String,
    pub payload: Value,
    pub ttl: String,
    pub urgency: String,
}

#[derive(Clone, Default)]
pub struct Log {
    pub delivered: Arc<Mutex<Vec<Delivered>>>,
    /// Requests the fake refused, with why: none should appear in a passing test.
    pub refused: Arc<Mutex<Vec<String>>>,
}

pub struct FakePushService {
    pub server: MockServer,
    pub log: Log,
}

/// What a push service knows of one subscription: enough to check and decrypt a push to it.
pub struct PushEndpoint {
    pub endpoint: String,
    /// The push service's origin: the VAPID JWT's audience.
    pub origin: String,
    pub keys: ece::EcKeyComponents,
    pub auth: [u8; 16],
}

struct Endpoint {
    push: PushEndpoint,
    status: u16,
    log: Log,
}

impl PushEndpoint {
    /// The push decrypted, or why a real push service would refuse it.
    pub fn check(&self, request: &Request) -> Result<Delivered, String> {
        let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let authorization = header("authorization").ok_or("no Authorization")?;
        let params = authorization.strip_prefix("vapid ").ok_or("not a vapid Authorization")?;
        let field = |key: &str| {
            params.split(',').map(str::trim).find_map(|p| p.strip_prefix(&format!("{key}="))).map(str::to_owned)
        };
        let (token, key) = (field("t").ok_or("no t=")?, field("k").ok_or("no k=")?);
        if key != VAPID_PUBLIC_KEY {
            return Err(format!("k is not the server's public key: {key}"));
        }
        let point = URL_SAFE_NO_PAD.decode(&key).map_err(|e| e.to_string())?;
        let decoding = DecodingKey::from_ec_components(
            &URL_SAFE_NO_PAD.encode(&point[1..33]),
            &URL_SAFE_NO_PAD.encode(&point[33..65]),
        )
        .map_err(|e| e.to_string())?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&[self.origin.as_str()]);
        validation.set_required_spec_claims(&["exp", "aud"]);
        let claims =
            jsonwebtoken::decode::<Value>(&token, &decoding, &validation).map_err(|e| format!("JWT: {e}"))?.claims;
        let exp = claims["exp"].as_i64().ok_or("no exp")?;
        if exp > time::OffsetDateTime::now_utc().unix_timestamp() + 24 * 3600 {
            return Err("exp is more than 24 hours away".into());
        }
        let sub = claims["sub"].as_str().ok_or("no sub")?;
        if !(sub.starts_with("mailto:") || sub.starts_with("https://")) {
            return Err(format!("sub is not a contact: {sub}"));
        }
        if header("content-encoding").as_deref() != Some("aes128gcm") {
            return Err("Content-Encoding is not aes128gcm".into());
        }
        let ttl = header("ttl").ok_or("no TTL")?;
        ttl.parse::<u32>().map_err(|_| "TTL is not an integer")?;
        let urgency = header("urgency").unwrap_or_else(|| "normal".into());
        if !["very-low", "low", "normal", "high"].contains(&urgency.as_str()) {
            return Err(format!("bad Urgency {urgency}"));
        }
        let plain = ece::decrypt(&self.keys, &self.auth, &request.body).map_err(|e| format!("decrypt: {e}"))?;
        let payload = serde_json::from_slice(&plain).map_err(|e| format!("payload: {e}"))?;
        Ok(Delivered { endpoint: self.endpoint.clone(), payload, ttl, urgency })
    }
}

impl Respond for Endpoint {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        match self.push.check(request) {
            Ok(delivered) => {
                self.log.delivered.lock().unwrap().push(delivered);
                ResponseTemplate::new(self.status)
            }
            Err(why) => {
                self.log.refused.lock().unwrap().push(why.clone());
                ResponseTemplate::new(400).set_body_string(why)
            }
        }
    }
}

impl FakePushService {
    pub async fn start() -> Self {
        Self { server: MockServer::start().await, log: Log::default() }
    }

    /// A new subscriber whose endpoint answers `status` to a well-formed push.
    pub async fn subscriber(&self, status: u16) -> FakeSubscriber {
        let (pair, auth) = ece::generate_keypair_and_auth_secret().unwrap();
        let keys = pair.raw_components().unwrap();
        let route = format!("/push/{}", uuid::Uuid::new_v4().simple());
        let endpoint = format!("{}{route}", self.server.uri());
        let subscriber = FakeSubscriber {
            endpoint: endpoint.clone(),
            p256dh: URL_SAFE_NO_PAD.encode(keys.public_key()),
            auth: URL_SAFE_NO_PAD.encode(auth),
        };
        let push = PushEndpoint { endpoint, origin: self.server.uri(), keys, auth };
        let responder = Endpoint { push, status, log: self.log.clone() };
        Mock::given(method("POST")).and(path(route)).respond_with(responder).mount(&self.server).await;
        subscriber
    }

    pub fn delivered(&self) -> Vec<Delivered> {
        self.log.delivered.lock().unwrap().clone()
    }

    pub fn refused(&self) -> Vec<String> {
        self.log.refused.lock().unwrap().clone()
    }
}
