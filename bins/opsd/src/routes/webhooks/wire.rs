//! The identity provider's webhook bodies (Clerk's shape), read into the domain's events. Reading
//! is lenient about fields it does not use, so the provider can add fields without breaking
//! deliveries.

use opsd_core::{TeamId, UserId, ValidationErrors};
use opsd_identity::{EventParseError, IdentityEvent, MembershipChange, UserProfile, membership_change, provider_id};
use serde::Deserialize;

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

#[derive(Deserialize)]
struct MembershipData {
    organization: IdOnly,
    public_user_data: PublicUserData,
    role: String,
    updated_at: i64,
}

#[derive(Deserialize)]
struct IdOnly {
    id: String,
}

#[derive(Deserialize)]
struct PublicUserData {
    user_id: String,
}

/// The event type as delivered, and the event (`IdentityEventDecoder`).
pub fn decode_identity_event(body: &[u8]) -> Result<(String, IdentityEvent), EventParseError> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|error| EventParseError::Malformed(error.to_string()))?;
    let envelope: Envelope = serde_json::from_value(value)
        .map_err(|error| ValidationErrors::single("body", format!("not an identity event: {error}")))?;
    let event = match envelope.event_type.as_str() {
        "user.created" => IdentityEvent::UserCreated(profile(envelope.data)?),
        "user.updated" => IdentityEvent::UserUpdated(profile(envelope.data)?),
        "user.deleted" => IdentityEvent::UserDeleted(user_id("data.id", data::<DeletedData>(envelope.data)?.id)?),
        "organizationMembership.created" | "organizationMembership.updated" => {
            IdentityEvent::MembershipSet(membership(envelope.data)?)
        }
        "organizationMembership.deleted" => IdentityEvent::MembershipRemoved(membership(envelope.data)?),
        "organization.deleted" => IdentityEvent::OrganizationDeleted(TeamId::new(provider_id(
            "data.id",
            data::<DeletedData>(envelope.data)?.id,
        )?)),
        other => IdentityEvent::Unknown(other.to_owned()),
    };
    Ok((envelope.event_type, event))
}

fn data<T: serde::de::DeserializeOwned>(data: serde_json::Value) -> Result<T, ValidationErrors> {
    serde_json::from_value(data).map_err(|error| ValidationErrors::single("data", error.to_string()))
}

fn user_id(field: &str, id: String) -> Result<UserId, ValidationErrors> {
    provider_id(field, id).map(UserId::new)
}

fn membership(value: serde_json::Value) -> Result<MembershipChange, ValidationErrors> {
    let data: MembershipData = data(value)?;
    membership_change(data.organization.id, data.public_user_data.user_id, &data.role, data.updated_at)
}

fn profile(data: serde_json::Value) -> Result<UserProfile, ValidationErrors> {
    let data: UserData = self::data(data)?;
    let email = data
        .primary_email_address_id
        .as_deref()
        .and_then(|primary| data.email_addresses.iter().find(|address| address.id == primary))
        .or(data.email_addresses.first())
        .map(|address| address.email_address.clone());
    Ok(UserProfile {
        id: user_id("data.id", data.id)?,
        email,
        first_name: data.first_name,
        last_name: data.last_name,
        image_url: data.image_url,
        updated_at_ms: data.updated_at,
    })
}

#[cfg(test)]
mod tests {
    use opsd_core::Role;

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
        let (kind, event) = decode_identity_event(CREATED.as_bytes()).unwrap();
        assert_eq!(kind, "user.created");
        let IdentityEvent::UserCreated(profile) = event else { panic!("expected user.created") };
        assert_eq!(profile.id.as_str(), "user_29w83sxmDNGwOuEthce5gg56FcC");
        assert_eq!(profile.email.as_deref(), Some("example@example.org"));
        assert_eq!(profile.updated_at_ms, 1654012591835);
    }

    #[test]
    fn a_deleted_user_is_only_an_id() {
        let body = br#"{"data":{"deleted":true,"id":"user_1","object":"user"},"object":"event","type":"user.deleted","timestamp":1}"#;
        assert_eq!(decode_identity_event(body).unwrap().1, IdentityEvent::UserDeleted(UserId::new("user_1")));
    }

    #[test]
    fn unknown_types_are_kept_by_name() {
        let body = br#"{"data":{"id":"sess_1"},"object":"event","type":"session.created"}"#;
        assert_eq!(decode_identity_event(body).unwrap().1, IdentityEvent::Unknown("session.created".into()));
    }

    #[test]
    fn a_known_type_without_its_data_is_invalid() {
        assert!(decode_identity_event(br#"{"type":"user.updated","data":{"first_name":"A"}}"#).is_err());
        assert!(decode_identity_event(br#"{"type":"user.deleted","data":{"id":""}}"#).is_err());
        assert!(matches!(decode_identity_event(b"not json"), Err(EventParseError::Malformed(_))));
        assert!(matches!(decode_identity_event(b"[1]"), Err(EventParseError::Invalid(_))));
    }

    // The provider's documented organizationMembership.created sample, trimmed.
    const MEMBERSHIP_CREATED: &str = r#"{
        "data": {
            "created_at": 1654013202977, "id": "orgmem_29w9UCliHQHzW7gJyLVQ6wOK2JF", "object": "organization_membership",
            "organization": {
                "created_at": 1654013202977, "created_by": "user_1vq84bqWzw7qmFgqSwN4CH1Wp0n",
                "id": "org_29w9IfBrPmcpi0IeBVaKtA7R94W", "image_url": "https://img.clerk.com/xxxxxx",
                "max_allowed_memberships": 3, "name": "Acme Inc", "object": "organization",
                "public_metadata": {}, "slug": "acme-inc", "updated_at": 1654013202977
            },
            "public_user_data": {
                "first_name": null, "identifier": "example@example.org", "image_url": "https://img.clerk.com/xxxxxx",
                "last_name": null, "profile_image_url": "https://www.gravatar.com/avatar?d=mp",
                "user_id": "user_29w83sxmDNGwOuEthce5gg56FcC"
            },
            "role": "org:admin", "updated_at": 1654013202977
        },
        "event_attributes": {"http_request": {"client_ip": "", "user_agent": ""}},
        "object": "event", "timestamp": 1654013202977, "type": "organizationMembership.created"
    }"#;

    #[test]
    fn membership_events_name_the_team_the_user_and_the_role() {
        let expected = MembershipChange {
            team_id: TeamId::new("org_29w9IfBrPmcpi0IeBVaKtA7R94W"),
            user_id: UserId::new("user_29w83sxmDNGwOuEthce5gg56FcC"),
            role: Role::Admin,
            updated_at_ms: 1654013202977,
        };
        let (kind, event) = decode_identity_event(MEMBERSHIP_CREATED.as_bytes()).unwrap();
        assert_eq!(
            (kind.as_str(), event),
            ("organizationMembership.created", IdentityEvent::MembershipSet(expected.clone()))
        );
        let updated = MEMBERSHIP_CREATED
            .replace("organizationMembership.created", "organizationMembership.updated")
            .replace("org:admin", "org:member");
        assert_eq!(
            decode_identity_event(updated.as_bytes()).unwrap().1,
            IdentityEvent::MembershipSet(MembershipChange { role: Role::Member, ..expected.clone() })
        );
        let deleted = MEMBERSHIP_CREATED.replace("organizationMembership.created", "organizationMembership.deleted");
        assert_eq!(decode_identity_event(deleted.as_bytes()).unwrap().1, IdentityEvent::MembershipRemoved(expected));
        let org = br#"{"data":{"deleted":true,"id":"org_1","object":"organization"},"object":"event","type":"organization.deleted"}"#;
        assert_eq!(decode_identity_event(org).unwrap().1, IdentityEvent::OrganizationDeleted(TeamId::new("org_1")));
        let no_user = br#"{"type":"organizationMembership.deleted","data":{"organization":{"id":"org_1"},"role":"org:member","updated_at":1}}"#;
        assert!(matches!(decode_identity_event(no_user), Err(EventParseError::Invalid(_))));
    }
}
