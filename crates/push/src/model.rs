use opsd_core::{FieldError, UserId, ValidationErrors};
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

/// The most a notification payload may weigh, as JSON.
pub const MAX_PAYLOAD_BYTES: usize = 3 * 1024;

/// A validated browser subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
    pub expires_at: Option<OffsetDateTime>,
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

/// A notification to send: to the caller, or (admins) to another member of the team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub notification: Notification,
    pub target: Option<UserId>,
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

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
}
