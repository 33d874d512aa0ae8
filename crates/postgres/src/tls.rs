//! Connections to PostgreSQL, with TLS by rustls (no OpenSSL) as libpq's `sslmode` and
//! `sslrootcert` in the URL ask:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | - |
//! | `prefer` (default) | when the server offers it | not checked |
//! | `require` | always | not checked |
//! | `verify-ca` | always | signed by a trusted root |
//! | `verify-full` | always | signed by a trusted root and issued for the host |
//!
//! The trusted roots are the PEM file `sslrootcert` names, else the Mozilla roots (webpki-roots).
//! Both the pool and the `LISTEN` connection connect here.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode as WireSslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// What connecting needs: the driver's configuration and the TLS connector.
#[derive(Clone)]
pub struct PgConnect {
    pub config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
}

impl PgConnect {
    /// Reads a `postgres://` URL; `sslmode` and `sslrootcert` are taken out of it and honoured.
    pub fn from_url(raw: &str) -> Result<Self, String> {
        let mut url = url::Url::parse(raw).map_err(|_| "DATABASE_URL: not a postgres:// URL".to_owned())?;
        let (mut mode, mut root_cert) = (SslMode::Prefer, None);
        let kept: Vec<(String, String)> = url
            .query_pairs()
            .filter_map(|(key, value)| match key.as_ref() {
                "sslmode" => {
                    mode = match value.as_ref() {
                        "disable" => SslMode::Disable,
                        "allow" | "prefer" => SslMode::Prefer,
                        "require" => SslMode::Require,
                        "verify-ca" => SslMode::VerifyCa,
                        "verify-full" => SslMode::VerifyFull,
                        other => return Some(Err(format!("DATABASE_URL: sslmode {other:?} is not one of disable, prefer, require, verify-ca, verify-full"))),
                    };
                    None
                }
                "sslrootcert" => {
                    root_cert = Some(value.into_owned());
                    None
                }
                _ => Some(Ok((key.into_owned(), value.into_owned()))),
            })
            .collect::<Result<_, _>>()?;
        url.query_pairs_mut().clear().extend_pairs(kept);
        let stripped = url.as_str().trim_end_matches('?').to_owned();
        let mut config: tokio_postgres::Config = stripped.parse().map_err(|error| format!("DATABASE_URL: {error}"))?;
        config.ssl_mode(match mode {
            SslMode::Disable => WireSslMode::Disable,
            SslMode::Prefer => WireSslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => WireSslMode::Require,
        });
        let tls = MakeRustlsConnect::new(client_config(mode, root_cert.as_deref())?);
        Ok(Self { config, tls })
    }
}

impl PgConnect {
    /// A host that stops answering (cut off, or its packets silently dropped) ends the connection
    /// within about `within`: unacknowledged data and unanswered keepalive probes both count
    /// against TCP_USER_TIMEOUT, and a query waiting for its answer, which sends nothing, has its
    /// idle socket probed by keepalives.
    pub fn detect_dead_peers(&mut self, within: std::time::Duration) {
        self.config
            .connect_timeout(within)
            .tcp_user_timeout(within)
            .keepalives(true)
            // Whole seconds on the socket (TCP_KEEPIDLE): zero is refused.
            .keepalives_idle(within.max(std::time::Duration::from_secs(1)))
            .keepalives_interval(std::time::Duration::from_secs(1))
            .keepalives_retries(3);
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(mode: SslMode, root_cert: Option<&str>) -> Result<ClientConfig, String> {
    let provider = provider();
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => {
            Arc::new(Lenient { chain: None, algorithms: provider.signature_verification_algorithms })
        }
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = Arc::new(roots(root_cert)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|error| format!("DATABASE_URL: the trusted roots are not usable: {error}"))?;
            match mode {
                SslMode::VerifyCa => {
                    Arc::new(Lenient { chain: Some(webpki), algorithms: provider.signature_verification_algorithms })
                }
                _ => webpki,
            }
        }
    };
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

fn roots(root_cert: Option<&str>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match root_cert {
        Some(path) => {
            let certificates = CertificateDer::pem_file_iter(path)
                .map_err(|error| format!("DATABASE_URL: sslrootcert {path:?} cannot be read: {error}"))?;
            for certificate in certificates {
                let certificate =
                    certificate.map_err(|error| format!("DATABASE_URL: sslrootcert {path:?}: {error}"))?;
                store.add(certificate).map_err(|error| format!("DATABASE_URL: sslrootcert {path:?}: {error}"))?;
            }
            if store.is_empty() {
                return Err(format!("DATABASE_URL: sslrootcert {path:?} holds no certificate"));
            }
        }
        None => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    Ok(store)
}

/// libpq's lenient modes. `prefer` and `require` (`chain: None`): encrypted, but the server's
/// certificate is not checked. `verify-ca`: the chain must lead to a trusted root; the name it was
/// issued for is not checked. The handshake's signatures are checked in every mode.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_read_and_taken_out_of_the_url() {
        let connect =
            PgConnect::from_url("postgres://app:pw@db.example:6543/opsd?sslmode=require&application_name=x").unwrap();
        assert_eq!(connect.config.get_ssl_mode(), WireSslMode::Require);
        assert_eq!(connect.config.get_application_name(), Some("x"));
        assert_eq!(connect.config.get_dbname(), Some("opsd"));
        let mode = |url: &str| PgConnect::from_url(url).unwrap().config.get_ssl_mode();
        assert_eq!(mode("postgres://app@db/opsd"), WireSslMode::Prefer, "prefer by default");
        assert_eq!(mode("postgres://app@db/opsd?sslmode=disable"), WireSslMode::Disable);
        assert_eq!(mode("postgres://app@db/opsd?sslmode=verify-full"), WireSslMode::Require);
        assert_eq!(mode("postgres://app@db/opsd?sslmode=verify-ca"), WireSslMode::Require);
    }

    #[test]
    fn bad_modes_and_unreadable_roots_are_clear_errors() {
        let error = PgConnect::from_url("postgres://app@db/opsd?sslmode=always").err().unwrap();
        assert!(error.contains("sslmode \"always\""), "{error}");
        let error = PgConnect::from_url("postgres://app@db/opsd?sslmode=verify-ca&sslrootcert=/nonexistent/root.crt")
            .err()
            .unwrap();
        assert!(error.contains("sslrootcert \"/nonexistent/root.crt\""), "{error}");
    }
}
