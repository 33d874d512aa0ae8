//! Session tokens signed with the test key pair, and a verifier that trusts it (unit tests only).

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};

use crate::token::{KeySource, TokenPolicy, TokenVerifier};

const SIGNING_KEY: &str = include_str!("../../../tests/fixtures/jwt-signing-key.pem");
const PUBLIC_KEY: &str = include_str!("../../../tests/fixtures/jwt-signing-key.pub.pem");

/// A token for `user`, issued now, expiring `exp_in` seconds from now, with `role` in `org_1`.
pub fn signed(user: &str, role: &str, exp_in: i64) -> String {
    let now = jsonwebtoken::get_current_timestamp() as i64;
    let claims =
        serde_json::json!({ "sub": user, "exp": now + exp_in, "iat": now, "o": { "id": "org_1", "rol": role } });
    let key = EncodingKey::from_rsa_pem(SIGNING_KEY.as_bytes()).unwrap();
    jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &key).unwrap()
}

pub fn verifier() -> TokenVerifier {
    TokenVerifier::new(
        KeySource::Static(DecodingKey::from_rsa_pem(PUBLIC_KEY.as_bytes()).unwrap()),
        TokenPolicy::default(),
    )
}
