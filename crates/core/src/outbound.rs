use async_trait::async_trait;

/// Why a user-supplied outbound URL may not be called.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UrlRejected(pub String);

/// URLs that users supply (push endpoints, team-chat webhooks) are an SSRF risk: only `https` to
/// public addresses passes. Checked when saved and again when connecting.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait OutboundUrlPolicy: Send + Sync {
    async fn check(&self, url: &str) -> Result<(), UrlRejected>;
}
