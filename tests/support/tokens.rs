use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

pub const ISSUER: &str = "https://clerk.test.example";
pub const AUTHORIZED_PARTY: &str = "https://app.test.example";

const SIGNING_KEY: &str = include_str!("../fixtures/jwt-signing-key.pem");
const OTHER_KEY: &str = include_str!("../fixtures/jwt-other-key.pem");
pub const SIGNING_PUBLIC_KEY: &str = include_str!("../fixtures/jwt-signing-key.pub.pem");

/// Mints session tokens the way the identity provider does (RS256, v2 claims).
#[derive(Clone, Copy, Default)]
pub struct TokenMinter;

impl TokenMinter {
    /// Standard v2 claims for `user` with `role` in `team`, valid for ten minutes.
    pub fn claims(&self, user: &str, team: Option<(&str, &str)>) -> Value {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let mut claims = json!({
            "sub": user, "iss": ISSUER, "azp": AUTHORIZED_PARTY, "sid": "sess_test", "v": 2,
            "iat": now, "nbf": now - 5, "exp": now + 600,
        });
        if let Some((team, role)) = team {
            claims["o"] = json!({ "id": team, "rol": role, "slg": "test" });
        }
        claims
    }

    pub fn sign(&self, claims: &Value) -> String {
        sign_with(SIGNING_KEY, claims)
    }

    pub fn sign_with_other_key(&self, claims: &Value) -> String {
        sign_with(OTHER_KEY, claims)
    }

    pub fn admin(&self, user: &str, team: &str) -> String {
        self.sign(&self.claims(user, Some((team, "admin"))))
    }

    pub fn member(&self, user: &str, team: &str) -> String {
        self.sign(&self.claims(user, Some((team, "member"))))
    }
}

fn sign_with(pem: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("ins_test".into());
    encode(&header, claims, &EncodingKey::from_rsa_pem(pem.as_bytes()).expect("fixture key")).expect("signing")
}
