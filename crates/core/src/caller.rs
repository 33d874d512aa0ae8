use crate::{TeamId, UserId};

crate::wire_enum! {
    #[strum(serialize_all = "lowercase")]
    pub enum Role {
        Admin,
        Member,
    }
}

impl Role {
    /// `admin` (session token v2) and `org:admin` (v1) are admin; anything else is a member.
    pub fn from_claim(role: &str) -> Self {
        match role {
            "admin" | "org:admin" => Role::Admin,
            _ => Role::Member,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TeamMembership {
    pub team_id: TeamId,
    pub role: Role,
}

/// The authenticated user of a request, with the team the token names as current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user_id: UserId,
    pub membership: Option<TeamMembership>,
}

impl Caller {
    /// A user whose current team is `team`, with `role` in it.
    pub fn in_team(user: &str, team: &str, role: Role) -> Self {
        Self { user_id: UserId::new(user), membership: Some(TeamMembership { team_id: TeamId::new(team), role }) }
    }
}

/// The caller lacks a team or the role an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Forbidden {
    #[error("the token names no current team")]
    NoTeam,
    #[error("the operation needs the admin role")]
    NotAdmin,
}

impl Caller {
    pub fn team(&self) -> Result<&TeamMembership, Forbidden> {
        self.membership.as_ref().ok_or(Forbidden::NoTeam)
    }

    pub fn team_id(&self) -> Result<&TeamId, Forbidden> {
        self.team().map(|m| &m.team_id)
    }

    pub fn admin_team(&self) -> Result<&TeamId, Forbidden> {
        let membership = self.team()?;
        match membership.role {
            Role::Admin => Ok(&membership.team_id),
            Role::Member => Err(Forbidden::NotAdmin),
        }
    }

    pub fn is_admin(&self) -> bool {
        matches!(&self.membership, Some(m) if m.role == Role::Admin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(role: Option<Role>) -> Caller {
        Caller {
            user_id: UserId::new("user_1"),
            membership: role.map(|role| TeamMembership { team_id: TeamId::new("org_1"), role }),
        }
    }

    #[test]
    fn v1_and_v2_admin_claims_are_admin_and_anything_else_is_member() {
        assert_eq!(Role::from_claim("admin"), Role::Admin);
        assert_eq!(Role::from_claim("org:admin"), Role::Admin);
        assert_eq!(Role::from_claim("org:member"), Role::Member);
        assert_eq!(Role::from_claim("basic_member"), Role::Member);
        assert_eq!(Role::from_claim(""), Role::Member);
    }

    #[test]
    fn team_access_needs_a_team_and_admin_access_the_admin_role() {
        assert_eq!(caller(None).team_id(), Err(Forbidden::NoTeam));
        assert_eq!(caller(Some(Role::Member)).admin_team(), Err(Forbidden::NotAdmin));
        assert_eq!(caller(Some(Role::Admin)).admin_team().unwrap().as_str(), "org_1");
        assert!(!caller(Some(Role::Member)).is_admin());
    }
}
