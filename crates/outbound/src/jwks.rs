use crate::calls::{Target, observed};
use std::time::Duration;

use async_trait::async_trait;
use opsd_core::StoreError;
use opsd_identity::{JwkSet, JwksFetcher};

/// Reads the identity provider's JWKS document (a URL the operator configures).
pub struct HttpJwksFetcher {
    client: reqwest::Client,
    url: String,
}

impl HttpJwksFetcher {
    pub fn new(url: String) -> Self {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("a reqwest client with a timeout");
        Self { client, url }
    }
}

#[async_trait]
impl JwksFetcher for HttpJwksFetcher {
    async fn fetch(&self) -> Result<JwkSet, StoreError> {
        let response = observed(Target::Jwks, self.client.get(&self.url))
            .await
            .map_err(|error| StoreError::Unavailable(format!("JWKS request: {error}")))?;
        if !response.status().is_success() {
            return Err(StoreError::Unavailable(format!("JWKS answered {}", response.status())));
        }
        response.json::<JwkSet>().await.map_err(|error| StoreError::Unknown(format!("JWKS body: {error}")))
    }
}

#[cfg(test)]
mod tests {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;

    #[tokio::test]
    async fn reads_a_jwks_document_and_reports_provider_errors() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/.well-known/jwks.json"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                r#"{"keys":[{"kty":"RSA","kid":"ins_1","alg":"RS256","use":"sig","n":"sXch","e":"AQAB"}]}"#,
                "application/json",
            ))
            .mount(&server)
            .await;
        let set = HttpJwksFetcher::new(format!("{}/.well-known/jwks.json", server.uri())).fetch().await.unwrap();
        assert_eq!(set.keys[0].common.key_id.as_deref(), Some("ins_1"));

        let missing = HttpJwksFetcher::new(format!("{}/nothing", server.uri())).fetch().await;
        assert!(matches!(missing, Err(StoreError::Unavailable(_))));
    }
}
