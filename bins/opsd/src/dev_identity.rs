//! A local identity for `just run`, so every route can be tried without an identity provider: an
//! RS256 key pair under `.data/` and session tokens signed with it. Nothing here is a default of a
//! release: the server only trusts the dev key when `just run` configures its public half, and
//! `opsd dev-token` refuses to sign without `OPSD_DEV_SIGNING_KEY`.

use std::path::Path;

use anyhow::{Context, bail};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

/// The variable naming the dev private key's file.
pub const SIGNING_KEY_VARIABLE: &str = "OPSD_DEV_SIGNING_KEY";
const KEY_ID: &str = "opsd-dev";

/// Writes `private.pem` (mode 0600) and `public.pem` into `dir` unless they exist.
pub fn ensure_keys(dir: &Path) -> anyhow::Result<()> {
    let (private, public) = (dir.join("private.pem"), dir.join("public.pem"));
    if private.exists() && public.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let key = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).context("generating an RSA key")?;
    let private_pem = key.to_pkcs8_pem(LineEnding::LF).context("encoding the private key")?;
    let public_pem = key.to_public_key().to_public_key_pem(LineEnding::LF).context("encoding the public key")?;
    write_private(&private, private_pem.as_bytes())?;
    std::fs::write(&public, public_pem).with_context(|| format!("writing {}", public.display()))?;
    Ok(())
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.write_all(bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// What `opsd dev-token` signs.
#[derive(Debug, PartialEq, Eq)]
pub struct TokenRequest {
    pub user: String,
    pub team: Option<String>,
    pub role: String,
    pub hours: i64,
}

/// Signs a session token as the identity provider would (v2 claims), with the configured issuer
/// and first authorized party so the running server accepts it.
pub fn mint(request: &TokenRequest) -> anyhow::Result<String> {
    let Some(path) = std::env::var_os(SIGNING_KEY_VARIABLE) else {
        bail!(
            "dev-token signs only with the dev identity key that `just run` creates ({SIGNING_KEY_VARIABLE}); a real deployment has none"
        );
    };
    let pem = std::fs::read(&path).with_context(|| format!("{SIGNING_KEY_VARIABLE}: reading {path:?}"))?;
    let key =
        EncodingKey::from_rsa_pem(&pem).with_context(|| format!("{SIGNING_KEY_VARIABLE}: not an RSA private key"))?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut claims = serde_json::json!({
        "sub": request.user, "iat": now, "nbf": now - 5, "exp": now + request.hours * 3600, "v": 2,
    });
    if let Some(team) = &request.team {
        claims["o"] = serde_json::json!({ "id": team, "rol": request.role });
    }
    if let Some(issuer) = std::env::var("IDENTITY_ISSUER").ok().filter(|v| !v.trim().is_empty()) {
        claims["iss"] = issuer.trim().into();
    }
    if let Some(party) = std::env::var("IDENTITY_AUTHORIZED_PARTIES")
        .ok()
        .and_then(|v| v.split(',').next().map(str::trim).map(str::to_owned))
        .filter(|p| !p.is_empty())
    {
        claims["azp"] = party.into();
    }
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(KEY_ID.into());
    jsonwebtoken::encode(&header, &claims, &key).context("signing the token")
}
