//! The push bodies as clients send and receive them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use opsd_core::{FieldError, UserId, ValidationErrors};
use opsd_push::{Message, Notification, SafePath, Subscription};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

pub const MAX_ENDPOINT_CHARS: usize = 2048;
pub const P256DH_BYTES: usize = 65;
pub const AUTH_BYTES: usize = 16;
/// The end of year 9999 in milliseconds since the epoch.
pub const MAX_EXPIRATION_MS: f64 = 253_402_300_799_999.0;

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionKeysRequest {
    /// base64url of the browser's 65-byte uncompressed P-256 public key.
    pub p256dh: String,
    /// base64url of the 16-byte authentication secret.
    pub auth: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubscribeRequest {
    /// The push service URL the browser gave (`https`).
    pub endpoint: String,
    pub keys: SubscriptionKeysRequest,
    /// When the subscription expires, in milliseconds since the epoch.
    #[schema(value_type = Option<f64>)]
    pub expiration_time: Option<serde_json::Number>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsubscribeRequest {
    pub endpoint: String,
}

fn decoded_len(field: &str, value: &str, expected: usize, what: &str) -> Result<Vec<u8>, FieldError> {
    let bytes =
        URL_SAFE_NO_PAD.decode(value.trim_end_matches('=')).map_err(|_| FieldError::new(field, "must be base64url"))?;
    if bytes.len() == expected { Ok(bytes) } else { Err(FieldError::new(field, format!("must be {what}"))) }
}

impl SubscribeRequest {
    /// Checks the shape; whether the endpoint may be called is the outbound policy's to say.
    pub fn try_into_domain(&self) -> Result<Subscription, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if self.endpoint.len() > MAX_ENDPOINT_CHARS {
            errors.push("endpoint", format!("must be at most {MAX_ENDPOINT_CHARS} characters"));
        }
        let p256dh = errors.check(decoded_len(
            "keys.p256dh",
            &self.keys.p256dh,
            P256DH_BYTES,
            "a 65-byte uncompressed P-256 point",
        ));
        if p256dh.as_ref().is_some_and(|point| point[0] != 0x04) {
            errors.push("keys.p256dh", "must be an uncompressed point (0x04 first)");
        }
        errors.check(decoded_len("keys.auth", &self.keys.auth, AUTH_BYTES, "16 bytes"));
        let expires_at = match &self.expiration_time {
            None => None,
            // Up to the end of year 9999, which any real expiration is well within.
            Some(ms) => match ms.as_f64().filter(|ms| ms.is_finite() && (0.0..=MAX_EXPIRATION_MS).contains(ms)) {
                Some(ms) => OffsetDateTime::from_unix_timestamp_nanos((ms as i128) * 1_000_000).ok(),
                None => {
                    errors.push("expirationTime", "must be milliseconds since the epoch");
                    None
                }
            },
        };
        errors.into_result()?;
        Ok(Subscription {
            endpoint: self.endpoint.clone(),
            p256dh: self.keys.p256dh.trim_end_matches('=').to_owned(),
            auth: self.keys.auth.trim_end_matches('=').to_owned(),
            expires_at,
        })
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendRequest {
    /// Default `opsd`. Title, body and url together: at most 3 KiB as the encoded JSON payload.
    pub title: Option<String>,
    pub body: Option<String>,
    /// A relative path within the app, opened on click; default `/`.
    pub url: Option<String>,
    /// Another user of the caller's team (admins only); default the caller.
    pub target_user_id: Option<String>,
}

impl SendRequest {
    pub fn try_into_domain(&self) -> Result<Message, ValidationErrors> {
        // The only size rule is the contract's: the encoded payload is at most 3 KiB.
        let mut errors = ValidationErrors::new();
        let title = self.title.clone().unwrap_or_else(|| "opsd".into());
        let body = self.body.clone().unwrap_or_default();
        let url = match &self.url {
            Some(raw) => errors.check(SafePath::parse("url", raw)),
            None => Some(SafePath::root()),
        };
        errors.into_result()?;
        let notification = Notification::new(title, body, url.expect("checked"))?;
        let target = self.target_user_id.as_deref().map(str::trim).filter(|id| !id.is_empty()).map(UserId::new);
        Ok(Message { notification, target })
    }
}

#[derive(Serialize, ToSchema)]
pub struct SendSummary {
    success: bool,
    /// Accepted by the push service (which does not mean displayed or read).
    sent: u32,
    failed: u32,
    /// Past their expiration time, or answered 404/410: deleted.
    expired: u32,
}

impl From<opsd_push::SendSummary> for SendSummary {
    fn from(summary: opsd_push::SendSummary) -> Self {
        Self { success: summary.success, sent: summary.sent, failed: summary.failed, expired: summary.expired }
    }
}

#[cfg(test)]
mod tests {
    use opsd_push::MAX_PAYLOAD_BYTES;

    use super::*;

    fn keys(p256dh: Vec<u8>, auth: Vec<u8>) -> SubscriptionKeysRequest {
        SubscriptionKeysRequest { p256dh: URL_SAFE_NO_PAD.encode(p256dh), auth: URL_SAFE_NO_PAD.encode(auth) }
    }

    fn request(keys: SubscriptionKeysRequest) -> SubscribeRequest {
        SubscribeRequest { endpoint: "https://push.example/abc".into(), keys, expiration_time: None }
    }

    #[test]
    fn keys_must_be_an_uncompressed_point_and_sixteen_bytes() {
        let mut point = vec![4u8; 65];
        assert!(request(keys(point.clone(), vec![1; 16])).try_into_domain().is_ok());
        let field = |r: SubscribeRequest| r.try_into_domain().unwrap_err().errors()[0].field.clone();
        assert_eq!(field(request(keys(vec![4; 33], vec![1; 16]))), "keys.p256dh");
        point[0] = 2;
        assert_eq!(field(request(keys(point, vec![1; 16]))), "keys.p256dh");
        assert_eq!(field(request(keys(vec![4; 65], vec![1; 15]))), "keys.auth");
        let mut far = request(keys(vec![4; 65], vec![1; 16]));
        far.expiration_time = Some(serde_json::Number::from_f64(2.5e219).unwrap());
        assert_eq!(far.try_into_domain().unwrap_err().errors()[0].field, "expirationTime");
        let garbage = SubscriptionKeysRequest { p256dh: "!!!".into(), auth: "@@".into() };
        assert_eq!(request(garbage).try_into_domain().unwrap_err().errors().len(), 2);
    }

    #[test]
    fn payloads_are_capped_at_three_kib_as_encoded_json_not_per_field() {
        let send =
            |body: String| SendRequest { title: Some("t".into()), body: Some(body), url: None, target_user_id: None };
        assert!(send("b".repeat(2500)).try_into_domain().is_ok(), "a long body fits while the payload does");
        let overhead = Notification::new("t".into(), String::new(), SafePath::root()).unwrap().to_json().len();
        assert!(send("b".repeat(MAX_PAYLOAD_BYTES - overhead)).try_into_domain().is_ok(), "exactly 3 KiB");
        assert!(send("b".repeat(MAX_PAYLOAD_BYTES - overhead + 1)).try_into_domain().is_err(), "one byte over");
        // Multi-byte and escaped characters count as they are encoded.
        assert!(send("é".repeat(1600)).try_into_domain().is_err());
        assert!(send("\"".repeat(1600)).try_into_domain().is_err());
    }
}
