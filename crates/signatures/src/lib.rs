//! Standard Webhooks (v1) signatures: HMAC-SHA256 over `{id}.{timestamp}.{raw body}` with a
//! `whsec_<base64>` secret. Verification happens on the raw bytes, before any parsing.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

/// How far a delivery's timestamp may stray from now, either way (the reference libraries' value).
pub const TOLERANCE_SECONDS: i64 = 5 * 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the secret must have the form whsec_<base64>")]
    Malformed,
    #[error("the secret must decode to 24 to 64 bytes")]
    WrongLength,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("a signature header is missing")]
    MissingHeader,
    #[error("the timestamp is not an integer")]
    MalformedTimestamp,
    #[error("the timestamp is outside the tolerance")]
    StaleTimestamp,
    #[error("no signature matches")]
    NoMatchingSignature,
}

/// The three delivery headers, as found under any of the accepted prefixes.
#[derive(Debug, Clone, Copy)]
pub struct SignedDelivery<'a> {
    pub id: Option<&'a str>,
    pub timestamp: Option<&'a str>,
    pub signatures: Option<&'a str>,
}

#[derive(Clone)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

impl WebhookSecret {
    pub fn parse(secret: &str) -> Result<Self, SecretError> {
        let encoded = secret.trim().strip_prefix("whsec_").ok_or(SecretError::Malformed)?;
        let key = STANDARD.decode(encoded).map_err(|_| SecretError::Malformed)?;
        // The specification asks for 24 to 64 bytes; the providers' own test secrets are 18 to 32.
        if key.len() < 16 || key.len() > 64 {
            return Err(SecretError::WrongLength);
        }
        Ok(Self { key })
    }

    /// The `v1,<base64>` signature of one delivery.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        format!("v1,{}", STANDARD.encode(self.mac(id, &timestamp.to_string(), body)))
    }

    /// Accepts when the timestamp is within tolerance of `now_unix` and any `v1,` entry of the
    /// space-separated list matches; returns the delivery id.
    pub fn verify<'a>(&self, delivery: SignedDelivery<'a>, body: &[u8], now_unix: i64) -> Result<&'a str, VerifyError> {
        let id = delivery.id.filter(|v| !v.is_empty()).ok_or(VerifyError::MissingHeader)?;
        let timestamp = delivery.timestamp.ok_or(VerifyError::MissingHeader)?;
        let signatures = delivery.signatures.ok_or(VerifyError::MissingHeader)?;
        let sent_at: i64 = timestamp.trim().parse().map_err(|_| VerifyError::MalformedTimestamp)?;
        // Checked: a crafted timestamp near i64::MIN or MAX must not overflow the difference.
        let skew = now_unix.checked_sub(sent_at).and_then(i64::checked_abs);
        if skew.is_none_or(|skew| skew > TOLERANCE_SECONDS) {
            return Err(VerifyError::StaleTimestamp);
        }
        let expected = self.mac(id, timestamp.trim(), body);
        let matched = signatures
            .split(' ')
            .filter_map(|entry| entry.strip_prefix("v1,"))
            .filter_map(|encoded| STANDARD.decode(encoded).ok())
            .any(|candidate| bool::from(candidate.ct_eq(&expected)));
        if matched { Ok(id) } else { Err(VerifyError::NoMatchingSignature) }
    }

    fn mac(&self, id: &str, timestamp: &str, body: &[u8]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        mac.finalize().into_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The test vector of the Standard Webhooks reference libraries.
    const SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const ID: &str = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const TS: i64 = 1649367553;
    const BODY: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    const SIGNATURE: &str = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";

    fn delivery<'a>(ts: &'a str, signatures: &'a str) -> SignedDelivery<'a> {
        SignedDelivery { id: Some(ID), timestamp: Some(ts), signatures: Some(signatures) }
    }

    #[test]
    fn signs_the_published_test_vector() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        assert_eq!(secret.sign(ID, TS, BODY), SIGNATURE);
    }

    #[test]
    fn verifies_the_published_test_vector_and_returns_the_id() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        assert_eq!(secret.verify(delivery("1649367553", SIGNATURE), BODY, TS), Ok(ID));
    }

    #[test]
    fn any_entry_of_a_rotation_list_accepts() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        let list = format!("v1,Zm9vYmFy v1a,ignored {SIGNATURE}");
        assert_eq!(secret.verify(delivery("1649367553", &list), BODY, TS), Ok(ID));
    }

    #[test]
    fn rejects_a_tampered_body_a_wrong_secret_and_garbage() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        let tampered = br#"{"email":"evil@example.com","username":"test_user"}"#;
        assert_eq!(
            secret.verify(delivery("1649367553", SIGNATURE), tampered, TS),
            Err(VerifyError::NoMatchingSignature)
        );
        let other = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(other.verify(delivery("1649367553", SIGNATURE), BODY, TS), Err(VerifyError::NoMatchingSignature));
        for garbage in ["", "v1,", "v1,@@@", "tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=", "v2,abc"] {
            assert_eq!(
                secret.verify(delivery("1649367553", garbage), BODY, TS),
                Err(VerifyError::NoMatchingSignature),
                "{garbage}"
            );
        }
    }

    #[test]
    fn enforces_five_minutes_either_way() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        let ok = delivery("1649367553", SIGNATURE);
        assert_eq!(secret.verify(ok, BODY, TS + 300), Ok(ID));
        assert_eq!(secret.verify(ok, BODY, TS - 300), Ok(ID));
        assert_eq!(secret.verify(ok, BODY, TS + 301), Err(VerifyError::StaleTimestamp));
        assert_eq!(secret.verify(ok, BODY, TS - 301), Err(VerifyError::StaleTimestamp));
        assert_eq!(secret.verify(delivery("soon", SIGNATURE), BODY, TS), Err(VerifyError::MalformedTimestamp));
    }

    #[test]
    fn extreme_timestamps_are_stale_not_an_overflow() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        for extreme in [i64::MIN, i64::MAX, i64::MIN + 1] {
            let ts = extreme.to_string();
            let signature = secret.sign(ID, extreme, b"{}");
            for now in [0, 1_795_348_800, i64::MAX, i64::MIN] {
                let verdict = secret.verify(delivery(&ts, &signature), b"{}", now);
                let within = (i128::from(now) - i128::from(extreme)).abs() <= i128::from(TOLERANCE_SECONDS);
                assert_eq!(verdict.is_ok(), within, "{extreme} at {now}: {verdict:?}");
                if !within {
                    assert_eq!(verdict, Err(VerifyError::StaleTimestamp));
                }
            }
        }
    }

    #[test]
    fn missing_headers_are_rejected() {
        let secret = WebhookSecret::parse(SECRET).unwrap();
        let missing = SignedDelivery { id: None, timestamp: Some("1"), signatures: Some(SIGNATURE) };
        assert_eq!(secret.verify(missing, BODY, TS), Err(VerifyError::MissingHeader));
        let empty_id = SignedDelivery { id: Some(""), ..delivery("1649367553", SIGNATURE) };
        assert_eq!(secret.verify(empty_id, BODY, TS), Err(VerifyError::MissingHeader));
    }

    #[test]
    fn secrets_must_be_whsec_base64() {
        assert_eq!(WebhookSecret::parse("C2FVsBQIhrscChlQIMV+b5sSYspob7oD").unwrap_err(), SecretError::Malformed);
        assert_eq!(WebhookSecret::parse("whsec_***").unwrap_err(), SecretError::Malformed);
        assert_eq!(WebhookSecret::parse("whsec_YWJj").unwrap_err(), SecretError::WrongLength);
    }
}
