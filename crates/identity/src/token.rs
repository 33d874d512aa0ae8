use std::collections::HashSet;
use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use opsd_core::{Role, TeamId, TeamMembership, UserId};
use serde::Deserialize;

use crate::jwks::JwksCache;

/// Leeway for `exp` and `nbf`, for clocks that disagree a little.
const LEEWAY_SECONDS: u64 = 60;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token is malformed")]
    Malformed,
    #[error("the algorithm is not allowed")]
    AlgorithmNotAllowed,
    #[error("no key matches the token")]
    UnknownKey,
    #[error("the signature or a registered claim is invalid: {0}")]
    Invalid(String),
    #[error("the authorized party is not allowed")]
    UnauthorizedParty,
    #[error("the signing keys could not be fetched")]
    KeysUnavailable,
}

#[derive(Debug, Clone, Default)]
pub struct TokenPolicy {
    pub issuer: Option<String>,
    pub authorized_parties: Vec<String>,
}

pub enum KeySource {
    Static(DecodingKey),
    Jwks(Arc<JwksCache>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub user_id: UserId,
    pub membership: Option<TeamMembership>,
    /// `iat`, unix seconds: a membership removed after it is not restored by this token.
    pub issued_at: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct Claims {
    sub: String,
    azp: Option<String>,
    iat: Option<i64>,
    /// Session token v2: the active organization.
    o: Option<OrganizationClaim>,
    /// Session token v1.
    org_id: Option<String>,
    org_role: Option<String>,
}

#[derive(Debug, Deserialize)]
struct OrganizationClaim {
    id: String,
    rol: Option<String>,
}

#[derive(derive_new::new)]
pub struct TokenVerifier {
    keys: KeySource,
    policy: TokenPolicy,
}

impl TokenVerifier {
    pub async fn verify(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = decode_header(token).map_err(|_| TokenError::Malformed)?;
        if header.alg != Algorithm::RS256 {
            return Err(TokenError::AlgorithmNotAllowed);
        }
        let claims = match &self.keys {
            KeySource::Static(key) => self.decode(token, key)?,
            KeySource::Jwks(cache) => {
                let key = cache.key(header.kid.as_deref()).await?;
                self.decode(token, &key)?
            }
        };
        self.check_authorized_party(claims.azp.as_deref())?;
        if claims.sub.is_empty() {
            return Err(TokenError::Invalid("empty subject".into()));
        }
        Ok(VerifiedToken {
            user_id: UserId::new(claims.sub),
            membership: membership(claims.o, claims.org_id, claims.org_role),
            issued_at: claims.iat,
        })
    }

    fn decode(&self, token: &str, key: &DecodingKey) -> Result<Claims, TokenError> {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.algorithms = vec![Algorithm::RS256];
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        // A claim the configuration names must be present: the library checks `iss` only when the
        // token carries one unless it is listed as required.
        if let Some(issuer) = &self.policy.issuer {
            validation.set_issuer(&[issuer]);
            validation.set_required_spec_claims(&["exp", "sub", "iss"]);
        } else {
            validation.set_required_spec_claims(&["exp", "sub"]);
        }
        decode::<Claims>(token, key, &validation)
            .map(|data| data.claims)
            .map_err(|error| TokenError::Invalid(error.to_string()))
    }

    /// With authorized parties configured, `azp` must be present and listed: the configuration names
    /// the claim, so a token without it is refused like a wrong one (stricter than the provider's
    /// example, which lets an absent `azp` through).
    fn check_authorized_party(&self, azp: Option<&str>) -> Result<(), TokenError> {
        if self.policy.authorized_parties.is_empty() {
            return Ok(());
        }
        let allowed: HashSet<&str> = self.policy.authorized_parties.iter().map(String::as_str).collect();
        match azp {
            Some(party) if allowed.contains(party) => Ok(()),
            _ => Err(TokenError::UnauthorizedParty),
        }
    }
}

fn membership(
    v2: Option<OrganizationClaim>,
    org_id: Option<String>,
    org_role: Option<String>,
) -> Option<TeamMembership> {
    let (team, role) = match v2 {
        Some(org) => (org.id, org.rol),
        None => (org_id?, org_role),
    };
    if team.is_empty() {
        return None;
    }
    Some(TeamMembership { team_id: TeamId::new(team), role: Role::from_claim(role.as_deref().unwrap_or("")) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_v2_organization_claim_before_the_v1_claims() {
        let v2 = OrganizationClaim { id: "org_2".into(), rol: Some("admin".into()) };
        let m = membership(Some(v2), Some("org_1".into()), Some("org:member".into())).unwrap();
        assert_eq!(m.team_id.as_str(), "org_2");
        assert_eq!(m.role, Role::Admin);
    }

    #[test]
    fn reads_v1_claims_and_treats_a_missing_role_as_member() {
        let m = membership(None, Some("org_1".into()), Some("org:admin".into())).unwrap();
        assert_eq!((m.team_id.as_str(), m.role), ("org_1", Role::Admin));
        let m = membership(None, Some("org_1".into()), None).unwrap();
        assert_eq!(m.role, Role::Member);
    }

    #[test]
    fn no_organization_means_no_team() {
        assert_eq!(membership(None, None, Some("org:admin".into())), None);
        assert_eq!(membership(None, Some(String::new()), None), None);
    }

    #[test]
    fn without_configured_parties_any_azp_passes() {
        let verifier =
            TokenVerifier::new(KeySource::Static(DecodingKey::from_secret(b"unused")), TokenPolicy::default());
        assert_eq!(verifier.check_authorized_party(None), Ok(()));
        assert_eq!(verifier.check_authorized_party(Some("https://any.example")), Ok(()));
    }

    #[test]
    fn authorized_parties_require_a_listed_azp() {
        let verifier = TokenVerifier::new(
            KeySource::Static(DecodingKey::from_secret(b"unused")),
            TokenPolicy { issuer: None, authorized_parties: vec!["https://app.example".into()] },
        );
        assert_eq!(verifier.check_authorized_party(None), Err(TokenError::UnauthorizedParty));
        assert_eq!(verifier.check_authorized_party(Some("https://app.example")), Ok(()));
        assert_eq!(verifier.check_authorized_party(Some("https://evil.example")), Err(TokenError::UnauthorizedParty));
    }
}
