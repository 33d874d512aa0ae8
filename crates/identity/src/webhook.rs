//! The identity provider's user and organization lifecycle events. Their JSON shape is the edge's
//! to know: the service reads a verified body through an `IdentityEventDecoder`.

use opsd_core::{Role, TeamId, UserId, ValidationErrors};

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
    /// `organizationMembership.created` and `.updated`: the user holds this role in the team.
    MembershipSet(MembershipChange),
    /// `organizationMembership.deleted`: the user left the team (or was removed).
    MembershipRemoved(MembershipChange),
    /// `organization.deleted`: every membership of the team goes; the team's data stays.
    OrganizationDeleted(TeamId),
    /// Recorded, without effect.
    Unknown(String),
}

/// One user's membership of one team, as an organization-membership event states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MembershipChange {
    pub team_id: TeamId,
    pub user_id: UserId,
    pub role: Role,
    /// The provider's `updated_at`, in milliseconds: an older event never undoes a newer one.
    pub updated_at_ms: i64,
}

/// Why a verified body is not an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventParseError {
    /// Not JSON at all.
    #[error("the body is not JSON: {0}")]
    Malformed(String),
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
}

/// Reads a verified webhook body as an identity event: the event type as delivered, and the event.
pub trait IdentityEventDecoder: Send + Sync {
    fn decode(&self, body: &[u8]) -> Result<(String, IdentityEvent), EventParseError>;
}

impl<F: Fn(&[u8]) -> Result<(String, IdentityEvent), EventParseError> + Send + Sync> IdentityEventDecoder for F {
    fn decode(&self, body: &[u8]) -> Result<(String, IdentityEvent), EventParseError> {
        self(body)
    }
}

/// A provider id: 1 to 200 characters.
pub fn provider_id(field: &str, id: String) -> Result<String, ValidationErrors> {
    if id.is_empty() || id.len() > 200 {
        return Err(ValidationErrors::single(field, "must be 1 to 200 characters"));
    }
    Ok(id)
}

/// A membership change as the provider states it; the role by its claim name.
pub fn membership_change(
    team: String,
    user: String,
    role: &str,
    updated_at_ms: i64,
) -> Result<MembershipChange, ValidationErrors> {
    Ok(MembershipChange {
        team_id: TeamId::new(provider_id("data.organization.id", team)?),
        user_id: UserId::new(provider_id("data.public_user_data.user_id", user)?),
        role: Role::from_claim(role),
        updated_at_ms,
    })
}
