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

/// Signs session tokens with the dev key as the identity provider would (v2 claims), with the
/// configured issuer and first authorized party so the running server accepts them.
pub struct DevSigner {
    key: EncodingKey,
    issuer: Option<String>,
    authorized_party: Option<String>,
}

impl DevSigner {
    /// The key of `OPSD_DEV_SIGNING_KEY`, with `IDENTITY_ISSUER` and `IDENTITY_AUTHORIZED_PARTIES`.
    pub fn from_environment() -> anyhow::Result<Self> {
        let Some(path) = std::env::var_os(SIGNING_KEY_VARIABLE) else {
            bail!(
                "dev tokens are signed only with the dev identity key that `just run` creates ({SIGNING_KEY_VARIABLE}); a real deployment has none"
            );
        };
        let nonempty = |name: &str| std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let party =
            nonempty("IDENTITY_AUTHORIZED_PARTIES").and_then(|v| v.split(',').next().map(|p| p.trim().to_owned()));
        Self::from_file(Path::new(&path), nonempty("IDENTITY_ISSUER"), party)
    }

    pub fn from_file(path: &Path, issuer: Option<String>, authorized_party: Option<String>) -> anyhow::Result<Self> {
        let pem = std::fs::read(path).with_context(|| format!("{SIGNING_KEY_VARIABLE}: reading {}", path.display()))?;
        let key = EncodingKey::from_rsa_pem(&pem)
            .with_context(|| format!("{SIGNING_KEY_VARIABLE}: not an RSA private key"))?;
        Ok(Self { key, issuer, authorized_party: authorized_party.filter(|p| !p.is_empty()) })
    }

    pub fn sign(&self, request: &TokenRequest) -> anyhow::Result<String> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let mut claims = serde_json::json!({
            "sub": request.user, "iat": now, "nbf": now - 5, "exp": now + request.hours * 3600, "v": 2,
        });
        if let Some(team) = &request.team {
            claims["o"] = serde_json::json!({ "id": team, "rol": request.role });
        }
        if let Some(issuer) = &self.issuer {
            claims["iss"] = issuer.as_str().into();
        }
        if let Some(party) = &self.authorized_party {
            claims["azp"] = party.as_str().into();
        }
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(KEY_ID.into());
        jsonwebtoken::encode(&header, &claims, &self.key).context("signing the token")
    }
}

/// Whether `public_pem` (the server's trusted key) is the public half of the dev key at `path`:
/// the server offers dev sign-in links only to an identity it would itself accept.
pub fn is_public_half(path: &Path, public_pem: &str) -> anyhow::Result<bool> {
    use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
    let pem = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let private = rsa::RsaPrivateKey::from_pkcs8_pem(&pem).context("the dev key is not a PKCS#8 RSA key")?;
    Ok(rsa::RsaPublicKey::from_public_key_pem(public_pem.trim()).is_ok_and(|public| public == private.to_public_key()))
}

/// A ticket for a one-time sign-in link: 32 bytes from the operating system's CSPRNG, base64url.
pub fn new_ticket() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
