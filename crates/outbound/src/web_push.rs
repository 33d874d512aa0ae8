//! Sending web push: RFC 8291 encryption and RFC 8292 VAPID by the web-push crate, the request over
//! reqwest through the SSRF-guarded client.

use crate::calls::{Target, observed};
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use opsd_core::OutboundUrlPolicy;
use opsd_push::{DeliveryResult, PushSender, Subscription};
use web_push::{ContentEncoding, SubscriptionInfo, Urgency, VapidSignatureBuilder, WebPushMessageBuilder};

use crate::url_policy::OutboundTargets;

/// How long a push service keeps an undelivered message: a day.
const TTL_SECONDS: u32 = 24 * 60 * 60;

#[derive(Debug, thiserror::Error)]
pub enum VapidKeyError {
    #[error("VAPID_PRIVATE_KEY: not a base64url P-256 private key")]
    InvalidPrivateKey,
    #[error("NEXT_PUBLIC_VAPID_PUBLIC_KEY does not belong to VAPID_PRIVATE_KEY")]
    PublicKeyMismatch,
    #[error("VAPID_SUBJECT: must be a mailto: or https: URL")]
    InvalidSubject,
}

/// The server's VAPID identity.
#[derive(Clone)]
pub struct VapidKeys {
    private_key: String,
    public_key: String,
    subject: String,
}

impl std::fmt::Debug for VapidKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VapidKeys").field("public_key", &self.public_key).finish_non_exhaustive()
    }
}

impl VapidKeys {
    /// Checks the private key, derives its public key, and checks a configured public key matches.
    pub fn new(private_key: &str, public_key: Option<&str>, subject: &str) -> Result<Self, VapidKeyError> {
        // The key crate panics on a scalar of the wrong length, so the length is checked first.
        let scalar = URL_SAFE_NO_PAD
            .decode(private_key.trim().trim_end_matches('='))
            .map_err(|_| VapidKeyError::InvalidPrivateKey)?;
        if scalar.len() != 32 {
            return Err(VapidKeyError::InvalidPrivateKey);
        }
        let builder = VapidSignatureBuilder::from_base64_no_sub(private_key.trim().trim_end_matches('='))
            .map_err(|_| VapidKeyError::InvalidPrivateKey)?;
        let derived = URL_SAFE_NO_PAD.encode(builder.get_public_key());
        if public_key.is_some_and(|configured| configured.trim().trim_end_matches('=') != derived) {
            return Err(VapidKeyError::PublicKeyMismatch);
        }
        if !(subject.starts_with("mailto:") || subject.starts_with("https://")) {
            return Err(VapidKeyError::InvalidSubject);
        }
        Ok(Self {
            private_key: private_key.trim().trim_end_matches('=').to_owned(),
            public_key: derived,
            subject: subject.to_owned(),
        })
    }

    /// A fresh key pair: (public key for `applicationServerKey`, private key), both base64url.
    pub fn generate() -> (String, String) {
        let (pair, _) = ece::generate_keypair_and_auth_secret().expect("the system's randomness");
        let components = pair.raw_components().expect("raw key components");
        (URL_SAFE_NO_PAD.encode(components.public_key()), URL_SAFE_NO_PAD.encode(components.private_key()))
    }

    pub fn public_key(&self) -> &str {
        &self.public_key
    }
}

pub struct VapidPushSender {
    keys: Option<VapidKeys>,
    client: reqwest::Client,
    targets: OutboundTargets,
}

impl VapidPushSender {
    pub fn new(keys: Option<VapidKeys>, targets: OutboundTargets, timeout: Duration) -> Self {
        Self { keys, client: targets.guarded_client(timeout), targets }
    }

    fn message(
        &self,
        keys: &VapidKeys,
        subscription: &Subscription,
        payload: &[u8],
    ) -> Result<web_push::WebPushMessage, String> {
        let info = SubscriptionInfo::new(
            subscription.endpoint.as_str(),
            subscription.p256dh.as_str(),
            subscription.auth.as_str(),
        );
        // RFC 8292: `aud` is the origin of the push resource, port included (web-push's default
        // drops a non-default port).
        let audience =
            url::Url::parse(&subscription.endpoint).map_err(|e| e.to_string())?.origin().ascii_serialization();
        let mut signature = VapidSignatureBuilder::from_base64(&keys.private_key, &info).map_err(|e| e.to_string())?;
        signature.add_claim("sub", keys.subject.as_str());
        signature.add_claim("aud", audience.as_str());
        let mut builder = WebPushMessageBuilder::new(&info);
        builder.set_payload(ContentEncoding::Aes128Gcm, payload);
        builder.set_ttl(TTL_SECONDS);
        builder.set_urgency(Urgency::Normal);
        builder.set_vapid_signature(signature.build().map_err(|e| e.to_string())?);
        builder.build().map_err(|e| e.to_string())
    }
}

#[async_trait]
impl PushSender for VapidPushSender {
    fn is_configured(&self) -> bool {
        self.keys.is_some()
    }

    async fn deliver(&self, subscription: &Subscription, payload: &[u8]) -> DeliveryResult {
        let Some(keys) = &self.keys else { return DeliveryResult::Failed("not configured".into()) };
        if self.targets.check(&subscription.endpoint).await.is_err() {
            return DeliveryResult::Failed("refused target".into());
        }
        let message = match self.message(keys, subscription, payload) {
            Ok(message) => message,
            Err(error) => return DeliveryResult::Failed(format!("could not encrypt: {error}")),
        };
        let mut request = self
            .client
            .post(&subscription.endpoint)
            .header("TTL", message.ttl.to_string())
            .header("Urgency", message.urgency.unwrap_or_default().to_string());
        if let Some(payload) = message.payload {
            request = request
                .header("Content-Encoding", payload.content_encoding.to_str())
                .header("Content-Type", "application/octet-stream");
            for (name, value) in payload.crypto_headers {
                request = request.header(name, value);
            }
            request = request.body(payload.content);
        }
        match observed(Target::Push, request).await {
            Ok(response) => match response.status().as_u16() {
                200..=299 => DeliveryResult::Accepted,
                404 | 410 => DeliveryResult::Gone,
                status => DeliveryResult::Failed(format!("push service answered {status}")),
            },
            Err(error) if error.is_timeout() => DeliveryResult::Failed("timeout".into()),
            Err(_) => DeliveryResult::Failed("connection failed".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_round_trip_and_mismatches_are_refused() {
        let (public, private) = VapidKeys::generate();
        let keys = VapidKeys::new(&private, Some(&public), "mailto:ops@example.com").unwrap();
        assert_eq!(keys.public_key(), public);
        let (other, _) = VapidKeys::generate();
        assert!(matches!(
            VapidKeys::new(&private, Some(&other), "mailto:a@b.c"),
            Err(VapidKeyError::PublicKeyMismatch)
        ));
        assert!(matches!(VapidKeys::new("nope", None, "mailto:a@b.c"), Err(VapidKeyError::InvalidPrivateKey)));
        assert!(matches!(VapidKeys::new(&private, None, "ops"), Err(VapidKeyError::InvalidSubject)));
    }
}
