//! The identity provider's user lifecycle events, as its webhooks deliver them (Clerk's shape).
//! Parsing is lenient about fields it does not use, so the provider can add fields without
//! breaking deliveries.

use opsd_core::{UserId, ValidationErrors};
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserProfile {
    pub id: UserId,
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub image_url: Option<String>,
    /// The provider's `updated_at`, in milliseconds: an older one never overwrites a newer one.
    pub updated_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityEvent {
    UserCreated(UserProfile),
    UserUpdated(UserProfile),
    UserDeleted(UserId),
    /// Recorded, without effect.
    Unknown(String),
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    event_type: String,
    data: serde_json::Value,
}

#[derive(Deserialize)]
struct UserData {
    id: String,
    #[serde(default)]
    email_addresses: Vec<EmailAddress>,
    primary_email_address_id: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    image_url: Option<String>,
    updated_at: i64,
}

#[derive(Deserialize)]
struct EmailAddress {
    id: String,
    email_address: String,
}

#[derive(Deserialize)]
struct DeletedData {
    id: String,
}

impl IdentityEvent {
    /// The event type as delivered, and the event.
    pub fn parse(body: &[u8]) -> Result<(String, Self), ValidationErrors> {
        let envelope: Envelope = serde_json::from_slice(body)
            .map_err(|error| ValidationErrors::single("body", format!("not an identity event: {error}")))?;
        let event = match envelope.event_type.as_str() {
            "user.created" => IdentityEvent::UserCreated(profile(envelope.data)?),
            "user.updated" => IdentityEvent::UserUpdated(profile(envelope.data)?),
            "user.deleted" => {
                let data: DeletedData = serde_json::from_value(envelope.data)
                    .map_err(|error| ValidationErrors::single("data", error.to_string()))?;
                IdentityEvent::UserDeleted(user_id(data.id)?)
            }
            other => IdentityEvent::Unknown(other.to_owned()),
        };
        Ok((envelope.event_type, event))
    }
}

fn user_id(id: String) -> Result<UserId, ValidationErrors> {
    if id.is_empty() || id.len() > 200 {
        return Err(ValidationErrors::single("data.id", "must be 1 to 200 characters"));
    }
    Ok(UserId::new(id))
}

fn profile(data: serde_json::Value) -> Result<UserProfile, ValidationErrors> {
    let data: UserData = serde_json::from_value(data).map_err(|error| ValidationErrors::single("data", error.to_string()))?;
    let email = data
        .primary_email_address_id
        .as_deref()
        .and_then(|primary| data.email_addresses.iter().find(|address| address.id == primary))
        .or(data.email_addresses.first())
        .map(|address| address.email_address.clone());
    Ok(UserProfile {
        id: user_id(data.id)?,
        email,
        first_name: data.first_name,
        last_name: data.last_name,
        image_url: data.image_url,
        updated_at_ms: data.updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Trimmed from the provider's documented sample, with fields this service ignores left in.
    const CREATED: &str = r#"{
        "data": {
            "birthday": "", "created_at": 1654012591514, "external_id": "567772",
            "email_addresses": [
                {"email_address": "old@example.org", "id": "idn_0", "linked_to": [], "object": "email_address"},
                {"email_address": "example@example.org", "id": "idn_29w83yL7CwVlJXylYLxcslromF1",
                 "linked_to": [], "object": "email_address", "verification": {"status": "verified", "strategy": "ticket"}}
            ],
            "first_name": "Example", "id": "user_29w83sxmDNGwOuEthce5gg56FcC", "image_url": "https://img.clerk.com/xxxxxx",
            "last_name": "Example", "object": "user", "password_enabled": true,
            "primary_email_address_id": "idn_29w83yL7CwVlJXylYLxcslromF1", "public_metadata": {},
            "updated_at": 1654012591835, "username": null
        },
        "event_attributes": {"http_request": {"client_ip": "0.0.0.0", "user_agent": "Mozilla/5.0"}},
        "instance_id": "ins_123", "object": "event", "timestamp": 1654012591835, "type": "user.created"
    }"#;

    #[test]
    fn a_created_user_takes_the_primary_email() {
        let (kind, event) = IdentityEvent::parse(CREATED.as_bytes()).unwrap();
        assert_eq!(kind, "user.created");
        let IdentityEvent::UserCreated(profile) = event else { panic!("expected user.created") };
        assert_eq!(profile.id.as_str(), "user_29w83sxmDNGwOuEthce5gg56FcC");
        assert_eq!(profile.email.as_deref(), Some("example@example.org"));
        assert_eq!(profile.updated_at_ms, 1654012591835);
    }

    #[test]
    fn a_deleted_user_is_only_an_id() {
        let body = br#"{"data":{"deleted":true,"id":"user_1","object":"user"},"object":"event","type":"user.deleted","timestamp":1}"#;
        assert_eq!(IdentityEvent::parse(body).unwrap().1, IdentityEvent::UserDeleted(UserId::new("user_1")));
    }

    #[test]
    fn unknown_types_are_kept_by_name() {
        let body = br#"{"data":{"id":"sess_1"},"object":"event","type":"session.created"}"#;
        assert_eq!(IdentityEvent::parse(body).unwrap().1, IdentityEvent::Unknown("session.created".into()));
    }

    #[test]
    fn a_known_type_without_its_data_is_invalid() {
        assert!(IdentityEvent::parse(br#"{"type":"user.updated","data":{"first_name":"A"}}"#).is_err());
        assert!(IdentityEvent::parse(br#"{"type":"user.deleted","data":{"id":""}}"#).is_err());
        assert!(IdentityEvent::parse(b"not json").is_err());
    }
}
