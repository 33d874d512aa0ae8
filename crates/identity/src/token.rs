use std::collections::HashSet;
use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use opsd_core::{Role, TeamId, TeamMembership, UserId};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::jwks::JwksCache;

/// Leeway for `exp` and `nbf`, for clocks that disagree a little.
const LEEWAY_SECONDS: u64 = 60;
/// Verified tokens remembered, so a client's next requests with the same session token skip the
/// RSA verification (a session token lives about a minute and signs many requests).
const VERIFIED_CAPACITY: u64 = 10_000;

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
    exp: i64,
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

/// A token that passed verification: what it says, the key that signed it, and until when it holds.
#[derive(Debug, Clone)]
struct Verified {
    token: VerifiedToken,
    kid: Option<String>,
    /// `exp` plus the leeway, unix seconds: the last second the library would still accept it.
    usable_until: i64,
}

pub struct TokenVerifier {
    keys: KeySource,
    policy: TokenPolicy,
    /// By SHA-256 of the whole token, so a token differing in any byte is verified afresh.
    verified: moka::sync::Cache<[u8; 32], Arc<Verified>>,
}

impl TokenVerifier {
    pub fn new(keys: KeySource, policy: TokenPolicy) -> Self {
        Self { keys, policy, verified: moka::sync::Cache::new(VERIFIED_CAPACITY) }
    }

    /// Verifies the token, or finds it verified before: a remembered token is still refused once
    /// past its `exp` (with the leeway), and, with a JWKS, once its key left the provider's set or
    /// the keys are too stale to use. Membership and deletion are checked per request by the caller.
    pub async fn verify(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(known) = self.verified.get(&digest) {
            if known.usable_at(jsonwebtoken::get_current_timestamp() as i64) {
                if let KeySource::Jwks(cache) = &self.keys {
                    cache.key(known.kid.as_deref()).await?;
                }
                return Ok(known.token.clone());
            }
            self.verified.invalidate(&digest);
        }
        let verified = self.verify_signed(token).await?;
        let token = verified.token.clone();
        self.verified.insert(digest, Arc::new(verified));
        Ok(token)
    }

    async fn verify_signed(&self, token: &str) -> Result<Verified, TokenError> {
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
        Ok(Verified {
            token: VerifiedToken {
                user_id: UserId::new(claims.sub),
                membership: membership(claims.o, claims.org_id, claims.org_role),
                issued_at: claims.iat,
            },
            kid: header.kid,
            usable_until: claims.exp.saturating_add(LEEWAY_SECONDS as i64),
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

impl Verified {
    fn usable_at(&self, now: i64) -> bool {
        now <= self.usable_until
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
    use crate::test_tokens::verifier;

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

    fn signed(exp_in: i64) -> String {
        crate::test_tokens::signed("user_1", "admin", exp_in)
    }

    #[tokio::test]
    async fn a_verified_token_is_remembered_and_any_other_byte_string_is_verified_afresh() {
        let verifier = verifier();
        let token = signed(600);
        let first = verifier.verify(&token).await.unwrap();
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        assert!(verifier.verified.contains_key(&digest), "remembered after its first verification");
        assert_eq!(verifier.verify(&token).await.unwrap(), first);
        let mut forged = token.clone();
        let last = forged.pop().unwrap();
        forged.push(if last == 'A' { 'B' } else { 'A' });
        assert!(verifier.verify(&forged).await.is_err(), "a changed signature is checked, not found");
        assert!(verifier.verify(&signed(-3_600)).await.is_err(), "an expired token is refused");
    }

    #[test]
    fn a_remembered_token_holds_until_its_exp_and_the_leeway() {
        let token = VerifiedToken { user_id: UserId::new("user_1"), membership: None, issued_at: None };
        let known = Verified { token, kid: None, usable_until: 1_000 + LEEWAY_SECONDS as i64 };
        assert!(known.usable_at(1_060));
        assert!(!known.usable_at(1_061));
    }
}
