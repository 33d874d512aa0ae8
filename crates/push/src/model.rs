use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use opsd_core::{FieldError, UserId, ValidationErrors};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// The most a notification payload may weigh, as JSON.
pub const MAX_PAYLOAD_BYTES: usize = 3 * 1024;

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SubscriptionKeysRequest {
    /// base64url of the browser's 65-byte uncompressed P-256 public key.
    pub p256dh: String,
    /// base64url of the 16-byte authentication secret.
    pub auth: String,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubscribeRequest {
    /// The push service URL the browser gave (`https`).
    pub endpoint: String,
    pub keys: SubscriptionKeysRequest,
    /// When the subscription expires, in milliseconds since the epoch.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub expiration_time: Option<serde_json::Number>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UnsubscribeRequest {
    pub endpoint: String,
}

/// A validated browser subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
    pub expires_at: Option<OffsetDateTime>,
}

fn decoded_len(field: &str, value: &str, expected: usize, what: &str) -> Result<Vec<u8>, FieldError> {
    let bytes =
        URL_SAFE_NO_PAD.decode(value.trim_end_matches('=')).map_err(|_| FieldError::new(field, "must be base64url"))?;
    if bytes.len() == expected { Ok(bytes) } else { Err(FieldError::new(field, format!("must be {what}"))) }
}

impl SubscribeRequest {
    /// Checks the shape; whether the endpoint may be called is the outbound policy's to say.
    pub fn parse(&self) -> Result<Subscription, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if self.endpoint.len() > 2048 {
            errors.push("endpoint", "must be at most 2048 characters");
        }
        let p256dh =
            errors.check(decoded_len("keys.p256dh", &self.keys.p256dh, 65, "a 65-byte uncompressed P-256 point"));
        if p256dh.as_ref().is_some_and(|point| point[0] != 0x04) {
            errors.push("keys.p256dh", "must be an uncompressed point (0x04 first)");
        }
        errors.check(decoded_len("keys.auth", &self.keys.auth, 16, "16 bytes"));
        let expires_at = match &self.expiration_time {
            None => None,
            // Up to the end of year 9999, which any real expiration is well within.
            Some(ms) => match ms.as_f64().filter(|ms| ms.is_finite() && (0.0..=253_402_300_799_999.0).contains(ms)) {
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSubscription {
    pub id: Uuid,
    pub user_id: UserId,
    pub subscription: Subscription,
}

/// A relative application path a notification click may open: same-origin by construction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SafePath(String);

impl SafePath {
    pub fn parse(field: &str, raw: &str) -> Result<Self, FieldError> {
        let invalid = || FieldError::new(field, "must be a relative path starting with a single /");
        if raw.len() > 1024 || !is_safe(raw) {
            return Err(invalid());
        }
        // A percent-encoded slash, backslash or control character must not smuggle in what the
        // raw form may not hold.
        let decoded = percent_encoding::percent_decode_str(raw).decode_utf8().map_err(|_| invalid())?;
        if !is_safe(&decoded) {
            return Err(invalid());
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn root() -> Self {
        Self("/".into())
    }
}

fn is_safe(path: &str) -> bool {
    let mut chars = path.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && !path.contains('\\')
        && !path.chars().any(|c| c.is_control() || c.is_whitespace() || is_bidi_control(c))
}

/// Characters that reorder how text displays: a path must read as what it is.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

/// What the browser receives (encrypted): at most 3 KiB as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notification {
    pub title: String,
    pub body: String,
    pub url: SafePath,
}

impl Notification {
    pub fn new(title: String, body: String, url: SafePath) -> Result<Self, ValidationErrors> {
        let notification = Self { title, body, url };
        if notification.to_json().len() > MAX_PAYLOAD_BYTES {
            return Err(ValidationErrors::single("body", "the notification must be at most 3 KiB as JSON"));
        }
        Ok(notification)
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a notification serializes")
    }
}

impl SendRequest {
    pub fn notification(&self) -> Result<Notification, ValidationErrors> {
        // The only size rule is the contract's: the encoded payload is at most 3 KiB.
        let mut errors = ValidationErrors::new();
        let title = self.title.clone().unwrap_or_else(|| "opsd".into());
        let body = self.body.clone().unwrap_or_default();
        let url = match &self.url {
            Some(raw) => errors.check(SafePath::parse("url", raw)),
            None => Some(SafePath::root()),
        };
        errors.into_result()?;
        Notification::new(title, body, url.expect("checked"))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SendSummary {
    pub success: bool,
    /// Accepted by the push service (which does not mean displayed or read).
    pub sent: u32,
    pub failed: u32,
    /// Past their expiration time, or answered 404/410: deleted.
    pub expired: u32,
}

#[cfg(test)]
mod tests {
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
        assert!(request(keys(point.clone(), vec![1; 16])).parse().is_ok());
        let field = |r: SubscribeRequest| r.parse().unwrap_err().errors()[0].field.clone();
        assert_eq!(field(request(keys(vec![4; 33], vec![1; 16]))), "keys.p256dh");
        point[0] = 2;
        assert_eq!(field(request(keys(point, vec![1; 16]))), "keys.p256dh");
        assert_eq!(field(request(keys(vec![4; 65], vec![1; 15]))), "keys.auth");
        let mut far = request(keys(vec![4; 65], vec![1; 16]));
        far.expiration_time = Some(serde_json::Number::from_f64(2.5e219).unwrap());
        assert_eq!(far.parse().unwrap_err().errors()[0].field, "expirationTime");
        let garbage = SubscriptionKeysRequest { p256dh: "!!!".into(), auth: "@@".into() };
        assert_eq!(request(garbage).parse().unwrap_err().errors().len(), 2);
    }

    #[test]
    fn only_single_slash_relative_paths_are_safe() {
        for ok in ["/", "/incidents/42", "/a?b=c#d", "/caf%C3%A9"] {
            assert!(SafePath::parse("url", ok).is_ok(), "{ok}");
        }
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil",
            "\\\\evil",
            "javascript:alert(1)",
            "evil",
            "",
            "/%2F%2Fevil.example",
            "/%5Cevil",
            "%2F%2Fevil",
            "/a\u{0}b",
            "/a\nb",
            "/%0d%0aSet-Cookie",
            "/ space",
            "/%E2%80%AE",
        ] {
            assert!(SafePath::parse("url", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn payloads_are_capped_at_three_kib_as_encoded_json_not_per_field() {
        let send =
            |body: String| SendRequest { title: Some("t".into()), body: Some(body), url: None, target_user_id: None };
        assert!(send("b".repeat(2500)).notification().is_ok(), "a long body fits while the payload does");
        let overhead = Notification::new("t".into(), String::new(), SafePath::root()).unwrap().to_json().len();
        assert!(send("b".repeat(MAX_PAYLOAD_BYTES - overhead)).notification().is_ok(), "exactly 3 KiB");
        assert!(send("b".repeat(MAX_PAYLOAD_BYTES - overhead + 1)).notification().is_err(), "one byte over");
        // Multi-byte and escaped characters count as they are encoded.
        assert!(send("é".repeat(1600)).notification().is_err());
        assert!(send("\"".repeat(1600)).notification().is_err());
    }
}
